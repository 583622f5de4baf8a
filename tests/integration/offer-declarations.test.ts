/**
 * What a supplier declares about its offer (issue 23): quantization, data policy and the limits it serves, set when
 * posting, changed or cleared by PATCH, refused with a 400 naming the field when malformed, shown in the supplier's
 * own view and in the public offers list.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { POST as postRoute } from "@/app/v1/supply/offers/route";
import { GET as getRoute, PATCH as patchRoute } from "@/app/v1/supply/offers/[id]/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import type { ModelOfferList } from "@/lib/market/schemas";
import type { OfferView } from "@/lib/supply/schemas";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedPrivateModel } from "../helpers/market-factories";

let upstream: ReferenceUpstream;
let small: Awaited<ReturnType<typeof seedPrivateModel>>; // 32,768 context, 4,096 output (the factory's)
let large: Awaited<ReturnType<typeof seedPrivateModel>>; // 32,768 context, 8,192 output
let supplier: Awaited<ReturnType<typeof seedSignedInAccount>>;

beforeAll(async () => {
  upstream = await startReferenceUpstream();
  small = await seedPrivateModel();
  large = await seedPrivateModel({ maxOutputTokens: 8_192 });
  supplier = await seedSignedInAccount();
});

afterAll(async () => {
  await db.offer.updateMany({ where: { supplierId: supplier.id }, data: { status: "withdrawn" } });
  await db.model.updateMany({ where: { id: { in: [small.id, large.id] } }, data: { active: false } });
  await upstream.stop();
});

const post = (body: Record<string, unknown>) =>
  postRoute(
    jsonRequest(
      "POST",
      "/v1/supply/offers",
      {
        upstream_base_url: upstream.url,
        upstream_api_key: upstream.apiKey,
        models: [
          { id: small.id, upstream_model: "llama-3.3-70b" },
          { id: large.id, upstream_model: "llama-3.3-70b" },
        ],
        price_cents: 90,
        daily_capacity: "10",
        ...body,
      },
      { cookie: supplier.cookie },
    ),
  );
const patch = (id: string, body: unknown) =>
  patchRoute(jsonRequest("PATCH", `/v1/supply/offers/${id}`, body, { cookie: supplier.cookie }), routeParams({ id }));
const getOne = async (id: string) =>
  (await (
    await getRoute(jsonRequest("GET", `/v1/supply/offers/${id}`, undefined, { cookie: supplier.cookie }), routeParams({ id }))
  ).json()) as OfferView;
async function publicView(modelId: string, offerId: string) {
  clearMarketCache();
  const res = await offersRoute(jsonRequest("GET", `/v1/market/models/${modelId}/offers`), routeParams({ id: modelId }));
  return ((await res.json()) as ModelOfferList).data.find((o) => o.id === offerId)!;
}

describe("what a supplier declares about an offer", () => {
  it("an offer that says nothing is shown unknown, retaining and training, with its models' limits", async () => {
    const res = await post({});
    expect(res.status).toBe(201);
    const offer = (await res.json()) as OfferView;
    expect(offer.declared).toEqual({
      quantization: "unknown",
      data_policy: { retains_prompts: true, trains_on_prompts: true },
      context_tokens: 32_768,
      max_output_tokens: 4_096, // the smallest of its models'
      streaming: { streams: true, bills_cancelled_in_full: false },
      prompt_caching: { caches_prompts: false, retention_seconds: 300 },
    });
    expect((await publicView(large.id, offer.id)).declared.max_output_tokens).toBe(8_192);
  });

  it("is set when posting, changed field by field, and a limit cleared with null; the public list shows it per model", async () => {
    const res = await post({
      quantization: "fp8",
      data_policy: { retains_prompts: false, trains_on_prompts: false },
      context_tokens: 16_000,
      max_output_tokens: 6_000,
      streaming: { streams: true, bills_cancelled_in_full: false },
      prompt_caching: { caches_prompts: false, retention_seconds: 300 },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const offer = (await res.json()) as OfferView;
    expect(offer.declared).toEqual({
      quantization: "fp8",
      data_policy: { retains_prompts: false, trains_on_prompts: false },
      context_tokens: 16_000,
      max_output_tokens: 6_000,
      streaming: { streams: true, bills_cancelled_in_full: false },
      prompt_caching: { caches_prompts: false, retention_seconds: 300 },
    });
    // Per model: a declared limit above the model's own is the model's.
    expect((await publicView(small.id, offer.id)).declared).toMatchObject({ context_tokens: 16_000, max_output_tokens: 4_096 });
    expect((await publicView(large.id, offer.id)).declared).toMatchObject({ context_tokens: 16_000, max_output_tokens: 6_000 });

    const changed = await patch(offer.id, { quantization: "int4", max_output_tokens: null });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as OfferView).declared).toEqual({
      quantization: "int4",
      data_policy: { retains_prompts: false, trains_on_prompts: false },
      context_tokens: 16_000,
      max_output_tokens: 4_096,
      streaming: { streams: true, bills_cancelled_in_full: false },
      prompt_caching: { caches_prompts: false, retention_seconds: 300 },
    });
    expect(await patch(offer.id, { data_policy: { retains_prompts: true, trains_on_prompts: false }, context_tokens: null })).toMatchObject(
      {
        status: 200,
      },
    );
    expect((await getOne(offer.id)).declared).toEqual({
      quantization: "int4",
      data_policy: { retains_prompts: true, trains_on_prompts: false },
      context_tokens: 32_768,
      max_output_tokens: 4_096,
      streaming: { streams: true, bills_cancelled_in_full: false },
      prompt_caching: { caches_prompts: false, retention_seconds: 300 },
    });
    expect((await publicView(large.id, offer.id)).declared).toEqual({
      quantization: "int4",
      data_policy: { retains_prompts: true, trains_on_prompts: false },
      context_tokens: 32_768,
      max_output_tokens: 8_192,
      streaming: { streams: true, bills_cancelled_in_full: false },
      prompt_caching: { caches_prompts: false, retention_seconds: 300 },
    });
    expect(await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).toMatchObject({ contextTokens: null, maxOutputTokens: null });
  });

  it("streaming is declared when posting or by PATCH, field by field, and shown on the public list", async () => {
    const res = await post({ streaming: { streams: false } });
    expect(res.status, await res.clone().text()).toBe(201);
    const offer = (await res.json()) as OfferView;
    expect(offer.declared.streaming).toEqual({ streams: false, bills_cancelled_in_full: false });
    expect((await patch(offer.id, { streaming: { bills_cancelled_in_full: true } })).status).toBe(200);
    expect((await getOne(offer.id)).declared.streaming).toEqual({ streams: false, bills_cancelled_in_full: true });
    expect((await publicView(small.id, offer.id)).declared.streaming).toEqual({ streams: false, bills_cancelled_in_full: true });
    const bad = await patch(offer.id, { streaming: { streams: "no" } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await readError(bad))).toMatch(/streaming/);
  });

  it("prompt caching is declared when posting or by PATCH, with a retention of 60 s to a day, and shown on the public list", async () => {
    const res = await post({ prompt_caching: { caches_prompts: true, retention_seconds: 600 } });
    expect(res.status, await res.clone().text()).toBe(201);
    const offer = (await res.json()) as OfferView;
    expect(offer.declared.prompt_caching).toEqual({ caches_prompts: true, retention_seconds: 600 });
    expect((await patch(offer.id, { prompt_caching: { retention_seconds: 3600 } })).status).toBe(200);
    expect((await getOne(offer.id)).declared.prompt_caching).toEqual({ caches_prompts: true, retention_seconds: 3600 });
    expect((await publicView(small.id, offer.id)).declared.prompt_caching).toEqual({ caches_prompts: true, retention_seconds: 3600 });
    for (const retention of [59, 86_401, 1.5]) {
      const bad = await patch(offer.id, { prompt_caching: { retention_seconds: retention } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await readError(bad))).toMatch(/prompt_caching/);
    }
    expect((await getOne(offer.id)).declared.prompt_caching.retention_seconds).toBe(3600);
  });

  it("malformed declarations are a 400 naming the field, on POST and PATCH, and nothing changes", async () => {
    const offer = (await (await post({ quantization: "bf16" })).json()) as OfferView;
    const bad: [Record<string, unknown>, string][] = [
      [{ quantization: "fp4" }, "quantization"],
      [{ quantization: null }, "quantization"],
      [{ data_policy: { retains_prompts: false } }, "data_policy.trains_on_prompts"],
      [{ data_policy: { retains_prompts: "no", trains_on_prompts: false } }, "data_policy.retains_prompts"],
      [{ data_policy: { retains_prompts: false, trains_on_prompts: false, sells: true } }, "data_policy"],
      [{ context_tokens: 0 }, "context_tokens"],
      [{ context_tokens: 1.5 }, "context_tokens"],
      [{ context_tokens: 10_000_001 }, "context_tokens"],
      [{ max_output_tokens: -1 }, "max_output_tokens"],
      [{ max_output_tokens: "4096" }, "max_output_tokens"],
    ];
    for (const [body, field] of bad) {
      for (const res of [await post(body), await patch(offer.id, body)]) {
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect((await readError(res)).message, JSON.stringify(body)).toContain(field);
      }
    }
    expect(await post({ context_tokens: null })).toMatchObject({ status: 400 });
    expect((await getOne(offer.id)).declared.quantization).toBe("bf16");
  });
});
