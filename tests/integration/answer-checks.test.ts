/**
 * Tool calls and structured outputs checked on live traffic (issue 37): every tool call an offer returns is checked
 * against the request's tool schemas, every strict json_schema answer against its schema, after the answer was
 * served; the offer's counts and error rates are published on the offers endpoint. Through real upstream answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { clearMarketCache } from "@/lib/market/cache";
import type { ModelOfferList } from "@/lib/market/schemas";
import { checkAnswer } from "@/lib/upstream/answer-checks";
import type { UpstreamAnswer } from "@/lib/upstream/answer";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { jsonRequest, routeParams } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const weather = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string", pattern: "^(a+)+$" }, days: { type: "integer", minimum: 1 } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};

const answerWith = (toolCalls: { name: string; arguments: string }[], content: string | null = null): UpstreamAnswer => ({
  message: {
    role: "assistant",
    content,
    ...(toolCalls.length > 0 && {
      tool_calls: toolCalls.map((c, i) => ({ id: `call_${i}`, type: "function" as const, function: c })),
    }),
  },
  finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
  logprobs: null,
  systemFingerprint: null,
  usage: null,
});

describe("checkAnswer", () => {
  it("sorts each tool call into ok, invalid_json, unknown_tool or schema_mismatch", () => {
    const request = { tools: [weather] };
    const results = checkAnswer(
      request,
      answerWith([
        { name: "get_weather", arguments: '{"city":"Paris","days":2}' },
        { name: "get_weather", arguments: '{"city":"Paris"' },
        { name: "get_time", arguments: "{}" },
        { name: "get_weather", arguments: '{"city":"Paris","days":0}' },
        { name: "get_weather", arguments: '{"town":"Paris"}' },
      ]),
    ).map((c) => c.result);
    expect(results).toEqual(["ok", "invalid_json", "unknown_tool", "schema_mismatch", "schema_mismatch"]);
  });

  it("checks a strict json_schema answer, leaves a non-strict one and an unconstrained one alone, and runs no buyer regex", () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
    const strict = { response_format: { type: "json_schema", json_schema: { schema, strict: true } } };
    expect(checkAnswer(strict, answerWith([], '{"n":3}'))).toEqual([{ kind: "json_schema", result: "ok" }]);
    expect(checkAnswer(strict, answerWith([], '{"n":"3"}'))).toEqual([{ kind: "json_schema", result: "schema_mismatch" }]);
    expect(checkAnswer(strict, answerWith([], "three"))).toEqual([{ kind: "json_schema", result: "invalid_json" }]);
    expect(checkAnswer({ response_format: { type: "json_schema", json_schema: { schema } } }, answerWith([], "three"))).toEqual([]);
    expect(checkAnswer({}, answerWith([], "hello"))).toEqual([]);
    // The pattern would backtrack for ages on this string: it is not run.
    const started = performance.now();
    const slow = checkAnswer(
      { tools: [weather] },
      answerWith([{ name: "get_weather", arguments: JSON.stringify({ city: `${"a".repeat(40)}!` }) }]),
    );
    expect(slow).toEqual([{ kind: "tool_call", result: "ok" }]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe("an offer's published answer checks", () => {
  let canned: CannedUpstream;
  let reference: ReferenceUpstream;
  beforeAll(async () => {
    [canned, reference] = await Promise.all([startCannedUpstream(), startReferenceUpstream({ defaultMode: "break-schema" })]);
  });
  afterAll(async () => {
    await Promise.all([canned.stop(), reference.stop()]);
  });

  async function publicChecks(modelId: string, offerId: string) {
    clearMarketCache();
    const res = await offersRoute(jsonRequest("GET", `/v1/market/models/${modelId}/offers`), routeParams({ id: modelId }));
    return ((await res.json()) as ModelOfferList).data.find((o) => o.id === offerId)!.answer_checks;
  }

  it("counts invalid JSON, an unknown tool and mismatched arguments from real answers, each in its bucket", async () => {
    const model = await seedPrivateModel({ supportsTools: true });
    const offer = await seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents: 90,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: canned.url,
      upstreamApiKey: canned.apiKey,
      features: { tools: true },
    });
    const buyer = await seedBuyer(5_000_000n);
    const calls = [
      { name: "get_weather", arguments: '{"city":"Paris"}' },
      { name: "get_weather", arguments: "{city: Paris}" },
      { name: "get_time", arguments: "{}" },
      { name: "get_weather", arguments: '{"city":7}' },
    ];
    for (const call of calls) {
      canned.answer({
        status: 200,
        body: {
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "canned-model",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: call }] },
              finish_reason: "tool_calls",
            },
          ],
          usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
        },
      });
      const res = await callCompletions(buyer.key, {
        model: model.id,
        messages: [{ role: "user", content: "Weather in Paris?" }],
        tools: [weather],
        max_tokens: 50,
      });
      expect(res.status).toBe(200);
    }
    await expect
      .poll(async () => (await publicChecks(model.id, offer.id)).tool_calls, { timeout: 5_000 })
      .toEqual({ checked: 4, failed: 3, invalid_json: 1, unknown_tool: 1, schema_mismatch: 1, error_rate: 0.75 });
    expect((await publicChecks(model.id, offer.id)).json_schema).toMatchObject({ checked: 0, error_rate: null });
  });

  it("counts a reference upstream that breaks the schema it was given", async () => {
    const model = await seedPrivateModel({ supportsTools: true });
    const offer = await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 90,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: reference.url,
      upstreamApiKey: reference.apiKey,
      features: { tools: true },
    });
    const buyer = await seedBuyer(5_000_000n);
    const res = await callCompletions(buyer.key, {
      model: model.id,
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [weather],
      tool_choice: "required",
      max_tokens: 50,
    });
    expect(res.status).toBe(200);
    await expect
      .poll(async () => (await publicChecks(model.id, offer.id)).tool_calls, { timeout: 5_000 })
      .toMatchObject({ checked: 1, failed: 1, schema_mismatch: 1 });
  });
});
