import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as listRoute, POST as postRoute } from "@/app/v1/supply/offers/route";
import { DELETE as deleteRoute, GET as getRoute, PATCH as patchRoute } from "@/app/v1/supply/offers/[id]/route";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { errorStatus } from "@/lib/http/errors";
import { decryptCredential } from "@/lib/upstream/key-encryption";
import { reportUpstreamFailure, reportUpstreamSuccess } from "@/lib/supply/offer-health";
import { createOffer } from "@/lib/supply/create-offer";
import { CreateOfferBody, type OfferView, type UpstreamPricingView } from "@/lib/supply/schemas";
import { postChatCompletion } from "@/lib/upstream/client";
import { REFERENCE_MODELS } from "../../scripts/reference-upstream/catalog";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedClear, seedPrivateModel } from "../helpers/market-factories";

type Account = Awaited<ReturnType<typeof seedSignedInAccount>>;
type Posted = OfferView & { upstream_pricing?: UpstreamPricingView[] };

// A key no other string in the system could contain by accident.
const UPSTREAM_KEY = `ref-key-${randomBytes(12).toString("hex")}`;

let upstream: ReferenceUpstream;
let sameModel: string; // list price equal to what the upstream publishes for it
let pricierModel: string; // list price above the upstream's llama price
let supplier: Account;
let other: Account;

function validOffer(overrides: Record<string, unknown> = {}) {
  return {
    upstream_base_url: upstream.url,
    upstream_api_key: UPSTREAM_KEY,
    models: [sameModel, { id: pricierModel, upstream_model: "llama-3.3-70b" }],
    price_cents: 85,
    daily_capacity: "12.5",
    ...overrides,
  };
}

const post = (body: unknown, who: Account = supplier) => postRoute(jsonRequest("POST", "/v1/supply/offers", body, { cookie: who.cookie }));
const list = (who: Account = supplier, query = "") =>
  listRoute(jsonRequest("GET", `/v1/supply/offers${query}`, undefined, { cookie: who.cookie }));
const getOne = (id: string, who: Account = supplier) =>
  getRoute(jsonRequest("GET", `/v1/supply/offers/${id}`, undefined, { cookie: who.cookie }), routeParams({ id }));
const patch = (id: string, body: unknown, who: Account = supplier) =>
  patchRoute(jsonRequest("PATCH", `/v1/supply/offers/${id}`, body, { cookie: who.cookie }), routeParams({ id }));
const withdraw = (id: string, who: Account = supplier) =>
  deleteRoute(jsonRequest("DELETE", `/v1/supply/offers/${id}`, undefined, { cookie: who.cookie }), routeParams({ id }));

async function postOk(overrides: Record<string, unknown> = {}): Promise<Posted> {
  const res = await post(validOffer(overrides));
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Posted;
}

const offerCount = (accountId: string) => db.offer.count({ where: { supplierId: accountId } });

beforeAll(async () => {
  sameModel = (await seedPrivateModel()).id;
  pricierModel = (await seedPrivateModel({ inputMicroDiemPerMTok: 1_000_000n, outputMicroDiemPerMTok: 4_000_000n })).id;
  upstream = await startReferenceUpstream({
    port: 0,
    apiKey: UPSTREAM_KEY,
    models: [...REFERENCE_MODELS, { ...REFERENCE_MODELS[0], id: sameModel, name: "Same as list" }],
  });
  [supplier, other] = await Promise.all([seedSignedInAccount(), seedSignedInAccount()]);
});

afterAll(async () => {
  await db.offer.updateMany({ where: { supplierId: { in: [supplier.id, other.id] } }, data: { status: "withdrawn" } });
  await db.model.updateMany({ where: { id: { in: [sameModel, pricierModel] } }, data: { active: false } });
  await upstream.stop();
});

describe("POST /v1/supply/offers", () => {
  it("posts an offer after checking the upstream, and shows the upstream's prices against our list price", async () => {
    const offer = await postOk();
    expect(offer).toMatchObject({
      status: "active",
      price_cents: 85,
      daily_capacity: "12.500000",
      upstream_base_url: upstream.url,
      models: [
        { id: sameModel, upstream_model: sameModel },
        { id: pricierModel, upstream_model: "llama-3.3-70b" },
      ].sort((a, b) => a.id.localeCompare(b.id)),
      today: { burned_diem: "0.000000", held_diem: "0.000000", remaining_diem: "12.500000" },
      earnings_usdc: "0.000000",
      health: { status: "healthy", cooldown_until: null },
      on_book: true,
    });
    expect(offer.upstream_pricing).toEqual([
      {
        model: sameModel,
        upstream_model: sameModel,
        list_price: {
          input_diem_per_mtok: "0.700000",
          output_diem_per_mtok: "2.800000",
          cache_read_diem_per_mtok: null,
          cache_write_diem_per_mtok: null,
        },
        upstream_price: {
          input_diem_per_mtok: "0.700000",
          output_diem_per_mtok: "2.800000",
          cache_read_diem_per_mtok: null,
          cache_write_diem_per_mtok: null,
        },
        comparison: "same",
      },
      {
        model: pricierModel,
        upstream_model: "llama-3.3-70b",
        list_price: {
          input_diem_per_mtok: "1.000000",
          output_diem_per_mtok: "4.000000",
          cache_read_diem_per_mtok: null,
          cache_write_diem_per_mtok: null,
        },
        upstream_price: {
          input_diem_per_mtok: "0.700000",
          output_diem_per_mtok: "2.800000",
          cache_read_diem_per_mtok: null,
          cache_write_diem_per_mtok: null,
        },
        comparison: "upstream_lower",
      },
    ]);
    const row = await db.offer.findUniqueOrThrow({ where: { id: offer.id } });
    expect(row.dailyCapacityMicroDiem).toBe(12_500_000n);
    expect(row.supplierId).toBe(supplier.id);
  });

  it.each([
    ["a key the upstream refuses", { upstream_api_key: "wrong-key" }, 422, "upstream_auth_failed"],
    ["an unreachable upstream", { upstream_base_url: "http://127.0.0.1:9/v1" }, 422, "upstream_unreachable"],
    ["a URL that is not an OpenAI base URL", { upstream_base_url: "ROOT" }, 422, "upstream_unreachable"],
    [
      "a model the upstream lacks",
      { models: [{ id: "PRICIER", upstream_model: "no-such-upstream-model" }] },
      422,
      "upstream_model_missing",
    ],
    ["the cloud metadata address", { upstream_base_url: "http://169.254.169.254/v1" }, 400, "upstream_url_forbidden"],
    ["a non-http URL", { upstream_base_url: "file:///etc/passwd" }, 400, "upstream_url_forbidden"],
    ["credentials in the URL", { upstream_base_url: "http://user:pw@127.0.0.1:9/v1" }, 400, "upstream_url_forbidden"],
    ["a zero price", { price_cents: 0 }, 400, "invalid_request"],
    ["a negative price", { price_cents: -5 }, 400, "invalid_request"],
    ["a price above 10000 cents", { price_cents: 10_001 }, 400, "invalid_request"],
    ["a fractional price", { price_cents: 85.5 }, 400, "invalid_request"],
    ["a price as a string", { price_cents: "85" }, 400, "invalid_request"],
    ["zero capacity", { daily_capacity: "0" }, 400, "invalid_request"],
    ["negative capacity", { daily_capacity: "-1" }, 400, "invalid_request"],
    ["capacity below one micro-diem", { daily_capacity: "0.0000001" }, 400, "invalid_request"],
    ["capacity in scientific notation", { daily_capacity: "1e3" }, 400, "invalid_request"],
    ["capacity as a number", { daily_capacity: 5 }, 400, "invalid_request"],
    ["absurd capacity", { daily_capacity: "1000000.000001" }, 400, "invalid_request"],
    ["a model not on this market", { models: ["no-such-model"] }, 400, "invalid_request"],
    ["the same model twice", { models: ["SAME", "SAME"] }, 400, "invalid_request"],
    ["no models", { models: [] }, 400, "invalid_request"],
    ["a key with whitespace", { upstream_api_key: "two words" }, 400, "invalid_request"],
    ["an unknown field", { colour: "red" }, 400, "unknown_field"],
  ])("refuses %s and creates nothing", async (_what, overrides, status, code) => {
    const resolved = JSON.parse(
      JSON.stringify(overrides)
        .replaceAll('"ROOT"', JSON.stringify(upstream.url.replace(/\/v1$/, "")))
        .replaceAll('"PRICIER"', JSON.stringify(pricierModel))
        .replaceAll('"SAME"', JSON.stringify(sameModel)),
    ) as Record<string, unknown>;
    const before = await offerCount(supplier.id);
    const res = await post(validOffer(resolved));
    const error = await readError(res);
    expect({ status: res.status, code: error.code }).toEqual({ status, code });
    expect(error.message.length).toBeGreaterThan(10);
    expect(JSON.stringify(error)).not.toContain(UPSTREAM_KEY);
    expect(await offerCount(supplier.id)).toBe(before);
  });

  it("names the missing models", async () => {
    const res = await post(validOffer({ models: [{ id: pricierModel, upstream_model: "gone-model" }] }));
    expect(await res.json()).toMatchObject({ error: { code: "upstream_model_missing", missing_models: ["gone-model"] } });
  });

  it("refuses private-network upstreams when the dev flag is off, at posting and at connection time", async () => {
    const production = { allowPrivate: false };
    const before = await offerCount(supplier.id);
    for (const url of [upstream.url, upstream.url.replace("http:", "https:"), `https://localhost:${upstream.port}/v1`]) {
      const error = await createOffer(supplier.id, CreateOfferBody.parse(validOffer({ upstream_base_url: url })), {
        policy: production,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("upstream_url_forbidden");
    }
    // A public-looking name that resolves to loopback passes the posting check and is stopped by the connection's lookup.
    const rebound = await createOffer(
      supplier.id,
      CreateOfferBody.parse(validOffer({ upstream_base_url: "https://upstream.example.com/v1" })),
      {
        policy: production,
        resolver: async () => [{ address: "127.0.0.1", family: 4 }],
      },
    ).catch((e: unknown) => e);
    expect((rebound as AppError).code).toBe("upstream_url_forbidden");
    expect(errorStatus(rebound as AppError)).toBe(400);
    expect(await offerCount(supplier.id)).toBe(before);
  });

  it("needs a wallet session, not an API key", async () => {
    const anonymous = await postRoute(jsonRequest("POST", "/v1/supply/offers", validOffer()));
    expect(anonymous.status).toBe(401);
    expect((await readError(anonymous)).code).toBe("session_required");
    const bearer = await postRoute(jsonRequest("POST", "/v1/supply/offers", validOffer(), { authorization: "Bearer svc_abc" }));
    expect(bearer.status).toBe(401);
    expect((await readError(bearer)).code).toBe("session_required");
    expect((await listRoute(jsonRequest("GET", "/v1/supply/offers"))).status).toBe(401);
  });
});

describe("upstream credentials", () => {
  it("are stored encrypted, round-trip for the router, and appear in no response, log line or column", async () => {
    const writes: string[] = [];
    const capture = (chunk: unknown) => {
      writes.push(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
      return true;
    };
    const out = vi.spyOn(process.stdout, "write").mockImplementation(capture);
    const err = vi.spyOn(process.stderr, "write").mockImplementation(capture);
    const level = env.LOG_LEVEL;
    env.LOG_LEVEL = "debug";
    const bodies: string[] = [];
    let id: string;
    try {
      const created = await post(validOffer());
      bodies.push(await created.text());
      id = (JSON.parse(bodies[0]) as Posted).id;
      for (const res of [
        await list(),
        await getOne(id),
        await patch(id, { upstream_api_key: UPSTREAM_KEY, price_cents: 86 }),
        await patch(id, { upstream_api_key: `${UPSTREAM_KEY}-wrong` }),
        await post(validOffer({ upstream_api_key: `${UPSTREAM_KEY}x` })),
        await withdraw(id),
      ]) {
        bodies.push(await res.text());
      }
    } finally {
      env.LOG_LEVEL = level;
      out.mockRestore();
      err.mockRestore();
    }
    expect(writes.some((line) => line.includes("offer posted"))).toBe(true); // the capture saw our log lines
    for (const text of [...bodies, ...writes]) expect(text).not.toContain(UPSTREAM_KEY);

    // Every column of the offer's rows, as text.
    const rows = await db.$queryRaw<{ row: string }[]>`
      SELECT to_jsonb(o)::text AS row FROM offers o WHERE o.id = ${id}::uuid
      UNION ALL SELECT to_jsonb(m)::text FROM offer_models m WHERE m.offer_id = ${id}::uuid`;
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const { row } of rows) expect(row).not.toContain(UPSTREAM_KEY);

    const stored = await db.offer.findUniqueOrThrow({ where: { id } });
    expect(stored.upstreamKeyCiphertext).toMatch(/^v1\./);
    expect(decryptCredential(stored.upstreamKeyCiphertext)).toBe(UPSTREAM_KEY);
    const credentials = { baseUrl: stored.upstreamBaseUrl, apiKey: decryptCredential(stored.upstreamKeyCiphertext) };
    expect(credentials).toEqual({ baseUrl: upstream.url, apiKey: UPSTREAM_KEY });
    const forwarded = await postChatCompletion({
      ...credentials,
      body: { model: sameModel, messages: [{ role: "user", content: "ping" }], max_tokens: 8 },
      timeoutMs: 5_000,
    });
    expect(forwarded.status).toBe(200);
  });
});

describe("GET /v1/supply/offers", () => {
  it("lists only the caller's offers, with today's burn and remaining capacity, earnings and health", async () => {
    const offer = await postOk({ price_cents: 85, daily_capacity: "10" });
    await seedClear({ offerId: offer.id, modelId: sameModel, burnMicroDiem: 2_000_000n });
    await reportUpstreamFailure(offer.id, "HTTP 502 from upstream");

    const res = await list();
    expect(res.status).toBe(200);
    const mine = ((await res.json()) as { data: OfferView[] }).data.find((o) => o.id === offer.id)!;
    // 2 diem at 85 cents = 1.70 USDC charged; the supplier earns 90%.
    expect(mine).toMatchObject({
      today: { burned_diem: "2.000000", held_diem: "0.000000", remaining_diem: "8.000000" },
      earnings_usdc: "1.530000",
      clears: 1,
      health: { status: "cooling_down", consecutive_failures: 1, last_failure_reason: "HTTP 502 from upstream" },
      on_book: false,
    });
    expect(Date.parse(mine.health.cooldown_until!)).toBeGreaterThan(Date.now());
    expect(mine.today.resets_at).toMatch(/T00:00:00\.000Z$/);

    await reportUpstreamSuccess(offer.id);
    const healed = (await (await getOne(offer.id)).json()) as OfferView;
    expect(healed.health).toMatchObject({ status: "healthy", cooldown_until: null, consecutive_failures: 0 });
    expect(healed.on_book).toBe(true);

    const theirs = (await (await list(other)).json()) as { data: OfferView[] };
    expect(theirs.data.some((o) => o.id === offer.id)).toBe(false);
  });
});

describe("PATCH /v1/supply/offers/{id}", () => {
  it("changes price, capacity and status", async () => {
    const offer = await postOk();
    const res = await patch(offer.id, { price_cents: 90, daily_capacity: "20" });
    expect(res.status).toBe(200);
    const changed = (await res.json()) as Posted;
    expect(changed).toMatchObject({ price_cents: 90, daily_capacity: "20.000000", today: { remaining_diem: "20.000000" } });
    expect(changed.upstream_pricing).toBeUndefined(); // no credential or model change, no upstream call

    const paused = (await (await patch(offer.id, { status: "paused" })).json()) as OfferView;
    expect(paused).toMatchObject({ status: "paused", on_book: false });
    const resumed = (await (await patch(offer.id, { status: "active" })).json()) as OfferView;
    expect(resumed).toMatchObject({ status: "active", on_book: true });
  });

  it("rechecks the upstream when models or credentials change, and changes nothing when the check fails", async () => {
    const offer = await postOk({ price_cents: 70 });
    await reportUpstreamFailure(offer.id, "timeout");

    const models = await patch(offer.id, { models: [sameModel] });
    expect(models.status).toBe(200);
    expect(((await models.json()) as Posted).models).toEqual([{ id: sameModel, upstream_model: sameModel, features: [] }]);

    for (const [body, code] of [
      [{ models: [{ id: pricierModel, upstream_model: "missing-model" }] }, "upstream_model_missing"],
      [{ upstream_api_key: "wrong-key", price_cents: 99 }, "upstream_auth_failed"],
      [{ upstream_base_url: "http://127.0.0.1:9/v1", upstream_api_key: UPSTREAM_KEY, price_cents: 99 }, "upstream_unreachable"],
      [{ upstream_base_url: "http://169.254.169.254/v1" }, "upstream_url_forbidden"],
    ] as const) {
      const res = await patch(offer.id, body);
      expect((await readError(res)).code).toBe(code);
    }
    const unchanged = await db.offer.findUniqueOrThrow({ where: { id: offer.id }, include: { models: true } });
    expect(unchanged.priceCents).toBe(70);
    expect(unchanged.upstreamBaseUrl).toBe(upstream.url);
    expect(unchanged.models.map((m) => m.modelId)).toEqual([sameModel]);
    expect(decryptCredential(unchanged.upstreamKeyCiphertext)).toBe(UPSTREAM_KEY);

    // Fresh credentials that pass the check also end the cooldown.
    const fixed = await patch(offer.id, { upstream_base_url: `${upstream.url}/`, upstream_api_key: UPSTREAM_KEY });
    expect(fixed.status).toBe(200);
    const body = (await fixed.json()) as Posted;
    expect(body.upstream_pricing?.map((p) => p.comparison)).toEqual(["same"]);
    expect(body.health.status).toBe("healthy");
    expect(body.upstream_base_url).toBe(upstream.url);
  });

  it("needs the upstream key again when the URL changes, and never sends the stored key to the new URL", async () => {
    const offer = await postOk();
    const seen: (string | undefined)[] = [];
    const collector = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ data: [{ id: sameModel }, { id: "llama-3.3-70b" }] }));
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1`;
    try {
      const res = await patch(offer.id, { upstream_base_url: collectorUrl });
      expect(res.status).toBe(400);
      expect(await readError(res)).toMatchObject({ code: "invalid_request", param: "upstream_api_key" });
      expect(seen).toEqual([]);
      expect((await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).upstreamBaseUrl).toBe(upstream.url);

      // The same URL spelled differently is no change; with the key, a new URL is checked with that key.
      expect((await patch(offer.id, { upstream_base_url: `${upstream.url}/`, price_cents: 86 })).status).toBe(200);
      const moved = await patch(offer.id, { upstream_base_url: collectorUrl, upstream_api_key: "their-own-key" });
      expect(moved.status).toBe(200);
      expect(seen).toEqual(["Bearer their-own-key"]);
    } finally {
      await withdraw(offer.id);
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });

  it("takes new credentials while another change replaces the model list during their check", async () => {
    const offer = await postOk();
    // The new upstream answers its /models only after a second PATCH has replaced the offer's models.
    let concurrent: Promise<Response> | undefined;
    const slow = createServer((_req, res) => {
      concurrent ??= patch(offer.id, { models: [sameModel] });
      void concurrent.then(() =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ data: [{ id: sameModel }, { id: "llama-3.3-70b" }] })),
      );
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1`;
    try {
      const moved = await patch(offer.id, { upstream_base_url: slowUrl, upstream_api_key: "their-own-key" });
      expect(moved.status, await moved.clone().text()).toBe(200);
      expect((await concurrent!).status).toBe(200);
      const after = await db.offer.findUniqueOrThrow({ where: { id: offer.id }, include: { models: true } });
      expect(after.upstreamBaseUrl).toBe(slowUrl);
      expect(after.models.map((m) => m.modelId)).toEqual([sameModel]);
    } finally {
      await withdraw(offer.id);
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  it("rejects empty or invalid changes", async () => {
    const offer = await postOk();
    for (const body of [{}, { status: "withdrawn" }, { price_cents: 0 }, { daily_capacity: "0" }, { supplierId: other.id }]) {
      const res = await patch(offer.id, body);
      expect(res.status).toBe(400);
    }
  });
});

describe("DELETE /v1/supply/offers/{id}", () => {
  it("withdraws the offer for good and keeps it for history", async () => {
    const offer = await postOk();
    const res = await withdraw(offer.id);
    expect(res.status).toBe(200);
    expect(((await res.json()) as OfferView).status).toBe("withdrawn");
    expect((await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).status).toBe("withdrawn");
    expect((await withdraw(offer.id)).status).toBe(200);

    const change = await patch(offer.id, { status: "active" });
    expect(change.status).toBe(409);
    expect((await readError(change)).code).toBe("conflict");

    const all = (await (await list()).json()) as { data: OfferView[] };
    expect(all.data.find((o) => o.id === offer.id)?.status).toBe("withdrawn");
    const active = (await (await list(supplier, "?status=active")).json()) as { data: OfferView[] };
    expect(active.data.some((o) => o.id === offer.id)).toBe(false);
    expect(active.data.every((o) => o.status === "active")).toBe(true);
  });
});

describe("offers of another wallet", () => {
  it("are a 404 to read, change or withdraw, as are unknown and malformed ids", async () => {
    const offer = await postOk({ price_cents: 77 });
    for (const id of [offer.id, randomUUID(), "not-a-uuid", "1; DROP TABLE offers"]) {
      for (const res of [await getOne(id, other), await patch(id, { price_cents: 1 }, other), await withdraw(id, other)]) {
        expect(res.status).toBe(404);
        expect((await readError(res)).code).toBe("not_found");
      }
    }
    const row = await db.offer.findUniqueOrThrow({ where: { id: offer.id } });
    expect({ status: row.status, price_cents: row.priceCents }).toEqual({ status: "active", price_cents: 77 });
  });
});
