/**
 * The record a buyer can follow (#37): the generation record shows svc's own token count beside the upstream's claim
 * and what was billed (reasoning too), and the supplier's display name beside its public id; a POST /v1/responses
 * answer is shown under the resp_… id its buyer was given, in the generation record, the usage list (which finds it by
 * either id) and the ledger CSV. Through real upstream answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getGenerationRoute } from "@/app/v1/generations/[id]/route";
import { GET as getLedgerExport } from "@/app/v1/account/ledger/export/route";
import { GET as getUsage } from "@/app/v1/account/usage/route";
import { POST as postResponses } from "@/app/v1/responses/route";
import { createSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db/client";
import type { Generation } from "@/lib/router/schemas";
import { defaultReasoningBudget } from "@/lib/upstream/metering";
import { supplierPublicId } from "@/lib/supply/public-id";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { jsonRequest, routeParams } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

let upstream: CannedUpstream;
let model: { id: string };
let offer: { id: string; supplierId: string };
let buyer: Awaited<ReturnType<typeof seedBuyer>>;
let cookie: string;

async function generation(id: string): Promise<Generation> {
  const res = await getGenerationRoute(
    jsonRequest("GET", `/v1/generations/${id}`, undefined, { authorization: `Bearer ${buyer.key}` }),
    routeParams({ id }),
  );
  expect(res.status).toBe(200);
  return (await res.json()) as Generation;
}

async function usage(query = ""): Promise<{ id: string; completion_id: string }[]> {
  const res = await getUsage(jsonRequest("GET", `/v1/account/usage${query}`, undefined, { cookie }));
  expect(res.status).toBe(200);
  return (await res.json()).data;
}

beforeAll(async () => {
  upstream = await startCannedUpstream();
  model = await seedPrivateModel({ billsReasoning: true });
  offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "canned-model" }],
    priceCents: 90,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
  });
  await db.account.update({ where: { id: offer.supplierId }, data: { displayName: "Honest Compute", displayNameKey: "honest compute" } });
  buyer = await seedBuyer(10_000_000n);
  cookie = `svc_session=${(await createSession(buyer.id)).token}`;
});

afterAll(async () => {
  await db.offer.update({ where: { id: offer.id }, data: { status: "withdrawn" } });
  await upstream.stop();
});

describe("the generation record", () => {
  it("shows svc's own count beside the claim and the bill, reasoning's bound, and who served it by name", async () => {
    // The claim overstates the reply (a dispute: svc's count is billed) and reports hidden reasoning.
    upstream.answer({
      status: 200,
      body: completion(
        { content: "Paris is the capital of France." },
        { prompt_tokens: 14, completion_tokens: 400, total_tokens: 414, completion_tokens_details: { reasoning_tokens: 300 } },
      ),
    });
    const res = await callCompletions(buyer.key, {
      model: model.id,
      messages: [{ role: "user", content: "What is the capital of France?" }],
      max_tokens: 64,
      reasoning_effort: "low",
    });
    expect(res.status).toBe(200);
    const answer = await res.json();
    const g = await generation(answer.id);
    const d = g.usage.cost_details;
    expect(g).toMatchObject({
      id: answer.id,
      completion_id: answer.id,
      supplier_id: supplierPublicId(offer.supplierId),
      supplier_name: "Honest Compute",
    });
    expect(d).toMatchObject({ claimed_prompt_tokens: 14, claimed_completion_tokens: 400, claimed_reasoning_tokens: 300 });
    expect(d.counted_prompt_tokens).toBeGreaterThan(0);
    // Seven words and a full stop: svc's tokenizer counts a handful of tokens, far below the claim's 100 visible ones.
    expect(d.counted_completion_tokens).toBeGreaterThan(0);
    expect(d.counted_completion_tokens).toBeLessThan(20);
    // Hidden reasoning is bounded, not counted: low effort's budget (what a reply this short makes plausible is no
    // less); the claim within it is billed.
    expect(d.reasoning_tokens_bound).toBe(defaultReasoningBudget("low"));
    expect(d.billed_reasoning_tokens).toBe(300);
    expect(d.usage_disputed).toBe(true);
    // The answer stated the same numbers when it was served.
    expect(answer.usage.cost_details).toEqual(d);
    const row = await db.completion.findUniqueOrThrow({ where: { id: answer.id } });
    expect(row).toMatchObject({
      countedPromptTokens: d.counted_prompt_tokens,
      countedCompletionTokens: d.counted_completion_tokens,
      reasoningBoundTokens: d.reasoning_tokens_bound,
      responsesApi: false,
    });
  });

  it("follows a Responses API answer by the resp_ id its buyer was given: record, usage list, search and CSV", async () => {
    upstream.answer({ status: 200, body: completion({ content: "Bonjour." }) });
    const res = await postResponses(
      jsonRequest(
        "POST",
        "/v1/responses",
        { model: model.id, input: "Say hello in French", max_output_tokens: 16 },
        {
          authorization: `Bearer ${buyer.key}`,
        },
      ),
    );
    expect(res.status).toBe(200);
    const response = (await res.json()) as { id: string };
    expect(response.id).toMatch(/^resp_/);
    const completionId = res.headers.get("x-svc-generation-id")!;
    expect(completionId).toBe(`chatcmpl-${response.id.slice("resp_".length)}`);

    for (const id of [response.id, completionId]) {
      expect(await generation(id)).toMatchObject({ id: response.id, completion_id: completionId });
      expect(await usage(`?id=${id}`)).toEqual([expect.objectContaining({ id: response.id, completion_id: completionId })]);
    }
    const listed = await usage();
    expect(listed[0]).toMatchObject({ id: response.id, completion_id: completionId });
    expect(listed.slice(1).map((u) => u.id)).toEqual(listed.slice(1).map((u) => u.completion_id));
    expect(await usage("?id=resp_nosuchresponse")).toEqual([]);
    const bad = await getUsage(jsonRequest("GET", "/v1/account/usage?id=not-an-id", undefined, { cookie }));
    expect(bad.status).toBe(400);

    const csv = await (await getLedgerExport(jsonRequest("GET", "/v1/account/ledger/export", undefined, { cookie }))).text();
    const [header, ...lines] = csv.trim().split("\r\n");
    const column = header.split(",").indexOf("generation_id");
    const generationIds = lines.map((l) => l.split(",")[column]).filter((id) => id !== "");
    expect(generationIds).toContain(response.id);
    expect(generationIds).not.toContain(completionId);
  });
});
