/**
 * Refused requests are counted per key with their reason (#38): a buyer sees why an agent stopped, beside what was
 * served, at GET /v1/account/usage/refusals; what a buyer can make svc write for them is one row per key, minute and
 * reason, however many requests it sends.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getRefusals } from "@/app/v1/account/usage/refusals/route";
import { flushRefusals, pruneRefusals } from "@/lib/account/refusals";
import { createApiKey } from "@/lib/auth/api-keys";
import { createSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db/client";
import type { RefusalList } from "@/lib/account/schemas";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { jsonRequest } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

let upstream: ReferenceUpstream;
let modelId: string;
beforeAll(async () => {
  upstream = await startReferenceUpstream();
  const model = await seedPrivateModel();
  modelId = model.id;
  await seedOffer({
    models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
    priceCents: 60,
    dailyCapacityMicroDiem: 100_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
  });
});
afterAll(() => upstream.stop());

const ask = (key: string, headers: Record<string, string> = {}) =>
  callCompletions(key, { model: modelId, messages: [{ role: "user", content: "hi" }], max_tokens: 20 }, headers);

async function refusals(credentials: Record<string, string>, query = "") {
  const res = await getRefusals(jsonRequest("GET", `/v1/account/usage/refusals${query}`, undefined, credentials));
  return { status: res.status, body: (await res.json()) as RefusalList };
}

describe("GET /v1/account/usage/refusals", () => {
  it("counts each key's 402s and 503s by reason, with what it was told, and nothing for what was served", async () => {
    const buyer = await seedBuyer(5_000_000n, { name: "agent-one" });
    const capped = await createApiKey(buyer.id, { name: "capped", spend_limit: 1n });
    expect((await ask(buyer.key)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await ask(buyer.key, { "x-svc-max-cents": "10" });
      expect(res.status).toBe(503);
      expect(res.headers.get("x-svc-error-code")).toBe("no_offer_at_or_below_max");
    }
    const limited = await ask(capped.key);
    expect(limited.status).toBe(402);
    const told = ((await limited.json()) as { error: { message: string } }).error.message;

    const { token } = await createSession(buyer.id);
    const { status, body } = await refusals({ cookie: `svc_session=${token}` });
    expect(status).toBe(200);
    expect(body.total).toBe(3);
    const perKey = Object.fromEntries(body.by_key.map((k) => [k.key.name, k]));
    expect(perKey["agent-one"]).toMatchObject({ total: 2, reasons: [{ status: 503, code: "no_offer_at_or_below_max", count: 2 }] });
    expect(perKey["capped"]).toMatchObject({
      key: { id: capped.id, prefix: capped.prefix },
      total: 1,
      reasons: [{ status: 402, code: "spend_limit_exceeded", count: 1, last_message: told }],
    });
    expect(body.recent.map((r) => [r.key.name, r.code, r.count]).sort()).toEqual([
      ["agent-one", "no_offer_at_or_below_max", 2],
      ["capped", "spend_limit_exceeded", 1],
    ]);

    // A key reads its own only, and no other key's; another account reads none of them.
    const own = await refusals({ authorization: `Bearer ${capped.key}` });
    expect(own.body.by_key.map((k) => k.key.name)).toEqual(["capped"]);
    expect((await refusals({ authorization: `Bearer ${capped.key}` }, `?key_id=${buyer.apiKeyId}`)).status).toBe(404);
    const other = await seedBuyer(0n);
    expect((await refusals({ authorization: `Bearer ${other.key}` })).body).toMatchObject({ total: 0, by_key: [], recent: [] });
  });

  it("a flood of refusals is one row per key, minute and reason, counted up", async () => {
    const buyer = await seedBuyer(1n, { name: "broke" });
    const answers = await Promise.all(Array.from({ length: 60 }, () => ask(buyer.key)));
    expect(answers.map((r) => r.status)).toEqual(Array(60).fill(402));
    await flushRefusals();
    const rows = await db.apiKeyRefusal.findMany({ where: { apiKeyId: buyer.apiKeyId } });
    // Minute boundaries can split the burst in two rows; never one per request.
    expect(rows.length).toBeLessThanOrEqual(2);
    expect(rows.reduce((sum, r) => sum + r.count, 0)).toBe(60);
    expect(new Set(rows.map((r) => r.code))).toEqual(new Set(["insufficient_balance"]));
  });

  it("keeps seven days: older minutes are pruned, and the window reads only its own hours", async () => {
    const buyer = await seedBuyer(1n);
    const at = (hoursAgo: number) => new Date(Math.floor((Date.now() - hoursAgo * 3_600_000) / 60_000) * 60_000);
    const row = (hoursAgo: number) => ({
      apiKeyId: buyer.apiKeyId,
      accountId: buyer.id,
      minute: at(hoursAgo),
      code: "rate_limited",
      status: 429,
      count: 3,
      lastAt: at(hoursAgo),
      lastMessage: "too many",
    });
    await db.apiKeyRefusal.createMany({ data: [row(2), row(30), row(8 * 24)] });
    const { token } = await createSession(buyer.id);
    const cookie = `svc_session=${token}`;
    expect((await refusals({ cookie })).body.total).toBe(3);
    expect((await refusals({ cookie }, "?hours=48")).body.total).toBe(6);
    expect(await pruneRefusals()).toBeGreaterThanOrEqual(1);
    expect(await db.apiKeyRefusal.count({ where: { apiKeyId: buyer.apiKeyId } })).toBe(2);
  });
});
