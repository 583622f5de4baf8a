/**
 * POST /v2/chat/completions and /v2/responses with stream: true, against the app over real HTTP (the front door in
 * front of the route handlers), routed to the reference upstream. What a streaming buyer relies on: the answer as it is
 * generated, one clear however the stream ends, and that clear's cost in the usage.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { formatMicros } from "@/lib/money";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { buyerBalance, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;

let upstream: ReferenceUpstream;
let app: RouteServer;

beforeAll(async () => {
  [upstream, app] = await Promise.all([startReferenceUpstream(), startRouteServer()]);
});

afterAll(async () => {
  await Promise.all([upstream.stop(), app.stop()]);
});

async function market(via: ReferenceUpstream = upstream) {
  const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, supportsVision: true });
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "mistral-31-24b" }],
    priceCents: 90,
    dailyCapacityMicroDiem: 100_000_000n,
    upstreamBaseUrl: via.url,
    upstreamApiKey: via.apiKey,
    features: { tools: true, json_schema: true, vision: true },
  });
  const buyer = await seedBuyer(5n * ONE_USDC);
  return { model, offer, buyer };
}

const client = (key: string) => new OpenAI({ baseURL: `${app.url}/v2`, apiKey: key, maxRetries: 0 });

describe("the openai SDK's chat stream", () => {
  it("streams the text and ends with the usage, its cost and the balance after the clear", async () => {
    const { model, buyer } = await market();
    const before = await buyerBalance(buyer.id);
    const stream = await client(buyer.key).chat.completions.create({
      model: model.id,
      messages: [{ role: "user", content: "Hello there" }],
      max_tokens: 60,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: (OpenAI.CompletionUsage & { cost?: number; cost_details?: { charge: string }; balance_remaining?: string }) | null = null;
    let id = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage).not.toBeNull();
    const clear = await db.clear.findUniqueOrThrow({ where: { completionId: id } });
    expect(usage!.cost_details!.charge).toBe(formatMicros(clear.chargeMicros));
    const after = await buyerBalance(buyer.id);
    expect(before.balance - after.balance).toBe(clear.chargeMicros);
    expect(usage!.balance_remaining).toBe(formatMicros(after.balance));
    expect(after.held).toBe(0n);
  });
});
