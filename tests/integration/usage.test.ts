import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getDaily } from "@/app/v1/account/usage/daily/route";
import { GET as getUsage } from "@/app/v1/account/usage/route";
import { createSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db/client";
import { formatMicros } from "@/lib/money";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { jsonRequest, readError } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

let upstream: ReferenceUpstream;
beforeAll(async () => {
  upstream = await startReferenceUpstream();
});
afterAll(() => upstream.stop());

describe("GET /v1/account/usage", () => {
  it("lists the buyer's own completions newest first, page by page, with key, tokens, burn, price and cost", async () => {
    const model = await seedPrivateModel();
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 75,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    const buyer = await seedBuyer(1_000_000n, { name: "usage test key" });
    const other = await seedBuyer(1_000_000n);
    const ids: string[] = [];
    for (const content of ["one", "two", "three"]) {
      const res = await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content }], max_tokens: 5 });
      expect(res.status).toBe(200);
      ids.push((await res.json()).id);
    }
    await callCompletions(other.key, { model: model.id, messages: [{ role: "user", content: "not yours" }], max_tokens: 5 });

    const { token } = await createSession(buyer.id);
    const cookie = `svc_session=${token}`;
    const first = await getUsage(jsonRequest("GET", "/v1/account/usage?limit=2", undefined, { cookie }));
    expect(first.status).toBe(200);
    const page1 = await first.json();
    expect(page1.data.map((u: { id: string }) => u.id)).toEqual([ids[2], ids[1]]);
    const clear = await db.clear.findUniqueOrThrow({ where: { completionId: ids[2] } });
    expect(page1.data[0]).toMatchObject({
      key: { id: buyer.apiKeyId, name: "usage test key" },
      model: model.id,
      price_cents: 75,
      cost: formatMicros(clear.chargeMicros),
      burn: formatMicros(clear.burnMicroDiem),
    });
    expect(page1.next_cursor).toBeTruthy();

    const second = await getUsage(jsonRequest("GET", `/v1/account/usage?limit=2&cursor=${page1.next_cursor}`, undefined, { cookie }));
    const page2 = await second.json();
    expect(page2.data.map((u: { id: string }) => u.id)).toEqual([ids[0]]);
    expect(page2.next_cursor).toBeNull();

    const bad = await getUsage(jsonRequest("GET", "/v1/account/usage?cursor=nonsense", undefined, { cookie }));
    expect(bad.status).toBe(400);
    expect((await readError(bad)).message).toContain("cursor");

    const daily = await (await getDaily(jsonRequest("GET", "/v1/account/usage/daily?days=7", undefined, { cookie }))).json();
    expect(daily.data).toHaveLength(1);
    expect(daily.data[0].requests).toBe(3);
  });
});
