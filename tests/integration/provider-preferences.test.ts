/**
 * Buyers choose by more than price (#23): the `provider` object on chat completions and responses, and the defaults a
 * key and an account hold. Several reference upstreams of one model differ as real providers do (a cheap slow one, a
 * pricier fast one); the measured figures routing sorts by are written to offer_quality directly here (measuring them
 * is the clear's job, tested where it is built), the offers' declared fields are set on their rows. Which offer served
 * a request is read from its completion (X-Svc-Generation-Id).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH as patchKey } from "@/app/v1/account/api-keys/[id]/route";
import { POST as createKeyRoute } from "@/app/v1/account/api-keys/route";
import { PATCH as patchAccount } from "@/app/v1/account/route";
import { GET as currentKey } from "@/app/v1/key/route";
import { GET as listModelsRoute } from "@/app/v1/models/route";
import { POST as responsesRoute } from "@/app/v1/responses/route";
import { db } from "@/lib/db/client";
import { supplierPublicId } from "@/lib/supply/public-id";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedAccount, seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedBuyerBalance } from "../helpers/ledger-factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
const hello = { role: "user" as const, content: "Hello there, reference upstream" };

let fastUp: ReferenceUpstream;
let slowUp: ReferenceUpstream;

beforeAll(async () => {
  [fastUp, slowUp] = await Promise.all([startReferenceUpstream(), startReferenceUpstream({ defaultMode: "latency:150" })]);
});

afterAll(async () => {
  await Promise.all([fastUp.stop(), slowUp.stop()]);
});

type OfferSpec = {
  price: number;
  via?: ReferenceUpstream;
  supplierId?: string;
  /** offer_quality: median latency (ms) and throughput (tokens/s); absent = no row (not enough traffic). */
  quality?: { latencyMs: number | null; tps: number | null };
  quantization?: "fp16" | "bf16" | "fp8" | "int8" | "int4" | "unknown";
  retainsPrompts?: boolean;
  trainsOnPrompts?: boolean;
  contextTokens?: number;
  maxOutputTokens?: number;
  probeDelisted?: boolean;
  createdAt?: Date;
};

/**
 * A private model (list price 0.70 diem per 1M prompt tokens, 2.80 per 1M completion tokens) and its offers, each
 * declaring fp16 and neither retaining nor training on prompts unless the spec says otherwise.
 */
async function market(specs: OfferSpec[]) {
  const model = await seedPrivateModel();
  const offers = [];
  for (const spec of specs) {
    const via = spec.via ?? fastUp;
    const offer = await seedOffer({
      supplierId: spec.supplierId,
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: spec.price,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: via.url,
      upstreamApiKey: via.apiKey,
    });
    await db.offer.update({
      where: { id: offer.id },
      data: {
        quantization: spec.quantization ?? "fp16",
        retainsPrompts: spec.retainsPrompts ?? false,
        trainsOnPrompts: spec.trainsOnPrompts ?? false,
        contextTokens: spec.contextTokens ?? null,
        maxOutputTokens: spec.maxOutputTokens ?? null,
        probeDelisted: spec.probeDelisted ?? false,
        probeStatus: spec.probeDelisted ? "flagged" : "unprobed",
        ...(spec.createdAt && { createdAt: spec.createdAt }),
      },
    });
    if (spec.quality) {
      await db.offerQuality.create({
        data: { offerId: offer.id, latencyP50Ms: spec.quality.latencyMs, throughputTps: spec.quality.tps, refreshedAt: new Date() },
      });
    }
    offers.push(offer);
  }
  return { model, offers };
}

/** The classic pair: a cheap slow offer (measured slow) and a pricier fast one (measured fast). */
async function cheapSlowPriceyFast(overrides: { cheap?: Partial<OfferSpec>; pricey?: Partial<OfferSpec> } = {}) {
  const { model, offers } = await market([
    { price: 80, via: slowUp, quality: { latencyMs: 2_000, tps: 20 }, ...overrides.cheap },
    { price: 150, via: fastUp, quality: { latencyMs: 200, tps: 120 }, ...overrides.pricey },
  ]);
  return { model, cheap: offers[0], pricey: offers[1] };
}

/** Every offer here is priced at or below this max (X-Svc-Max-Cents), so only the preferences choose. */
const MAX_CENTS = "200";

function chat(key: string, model: string, provider?: unknown, extra: Record<string, unknown> = {}) {
  return callCompletions(
    key,
    { model, messages: [hello], max_tokens: 16, ...(provider !== undefined && { provider }), ...extra },
    { "x-svc-max-cents": MAX_CENTS },
  );
}

/** The offer that served a 200. */
async function servedBy(res: Response): Promise<string> {
  expect(res.status).toBe(200);
  const id = res.headers.get("x-svc-generation-id")!;
  return (await db.completion.findUniqueOrThrow({ where: { id } })).offerId;
}

async function errorOf(res: Response) {
  return (await readError(res)) as { code: string; message: string; param?: string | null };
}

/** Nothing was held or charged for the buyer: balance as funded, nothing held, no hold row, the key's spend untouched. */
async function expectNothingHeld(buyer: { id: string; apiKeyId: string }, funded: bigint) {
  expect(await buyerBalance(buyer.id)).toEqual({ balance: funded, held: 0n });
  expect(await db.hold.count({ where: { accountId: buyer.id } })).toBe(0);
  expect((await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } })).spentMicros).toBe(0n);
}

describe("sort: price (the default), latency, throughput", () => {
  it("routes to the cheapest by default, to the fast one by latency and by throughput", async () => {
    const { model, cheap, pricey } = await cheapSlowPriceyFast();
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id))).toBe(cheap.id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "price" }))).toBe(cheap.id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency" }))).toBe(pricey.id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "throughput" }))).toBe(pricey.id);
  });

  it("puts offers without figures last, and keeps price-time priority among offers that tie", async () => {
    const older = new Date(Date.now() - 3_600_000);
    const { model, offers } = await market([
      { price: 50 }, // the cheapest, unmeasured: last by latency
      { price: 120, quality: { latencyMs: 300, tps: 50 } },
      { price: 100, quality: { latencyMs: 300, tps: 50 } }, // ties on latency with the one above: cheaper wins
      { price: 100, quality: { latencyMs: 300, tps: 50 }, createdAt: older }, // and at the same price, the older
    ]);
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency" }))).toBe(offers[3].id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "throughput" }))).toBe(offers[3].id);
    expect(await servedBy(await chat(buyer.key, model.id))).toBe(offers[0].id);
  });

  it("sorts the Responses API's requests alike (the same pipeline)", async () => {
    const { model, pricey } = await cheapSlowPriceyFast();
    const buyer = await seedBuyer(5n * ONE_USDC);
    const res = await responsesRoute(
      jsonRequest(
        "POST",
        "/v1/responses",
        { model: model.id, input: "Hello", max_output_tokens: 16, provider: { sort: "latency" } },
        {
          authorization: `Bearer ${buyer.key}`,
          "x-svc-max-cents": MAX_CENTS,
        },
      ),
    );
    expect(await servedBy(res)).toBe(pricey.id);
  });
});

describe("soft preferences reorder and never exclude", () => {
  it("preferred_max_latency puts the offers that meet it first, then price decides; none meeting it excludes nothing", async () => {
    const { model, cheap, pricey } = await cheapSlowPriceyFast();
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id, { preferred_max_latency: 0.5 }))).toBe(pricey.id);
    expect(await servedBy(await chat(buyer.key, model.id, { preferred_max_latency: 5 }))).toBe(cheap.id);
    expect(await servedBy(await chat(buyer.key, model.id, { preferred_max_latency: 0.05 }))).toBe(cheap.id);
  });

  it("preferred_min_throughput likewise; an offer without figures does not meet it", async () => {
    const { model, offers } = await market([
      { price: 60 },
      { price: 80, quality: { latencyMs: 900, tps: 20 } },
      { price: 150, quality: { latencyMs: 200, tps: 120 } },
    ]);
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id, { preferred_min_throughput: 100 }))).toBe(offers[2].id);
    expect(await servedBy(await chat(buyer.key, model.id, { preferred_min_throughput: 10 }))).toBe(offers[1].id);
    expect(await servedBy(await chat(buyer.key, model.id, { preferred_min_throughput: 1_000 }))).toBe(offers[0].id);
  });
});

describe("filters exclude as declared", () => {
  it("only and ignore take offer ids and supplier ids", async () => {
    const supplier = await seedAccount();
    const { model, cheap, pricey } = await cheapSlowPriceyFast({ pricey: { supplierId: supplier.id } });
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id, { only: [pricey.id] }))).toBe(pricey.id);
    expect(await servedBy(await chat(buyer.key, model.id, { only: [supplierPublicId(supplier.id)] }))).toBe(pricey.id);
    expect(await servedBy(await chat(buyer.key, model.id, { only: [pricey.id.toUpperCase(), cheap.id] }))).toBe(cheap.id);
    expect(await servedBy(await chat(buyer.key, model.id, { ignore: [cheap.id] }))).toBe(pricey.id);
    expect(await servedBy(await chat(buyer.key, model.id, { ignore: [supplierPublicId(cheap.supplierId)] }))).toBe(pricey.id);
  });

  it("quantizations and data_collection: deny keep only the offers declaring what the buyer allows", async () => {
    const { model, pricey } = await cheapSlowPriceyFast({ cheap: { quantization: "int4", retainsPrompts: true } });
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id, { quantizations: ["fp16", "bf16"] }))).toBe(pricey.id);
    expect(await servedBy(await chat(buyer.key, model.id, { data_collection: "deny" }))).toBe(pricey.id);

    const trains = await cheapSlowPriceyFast({ cheap: { trainsOnPrompts: true } });
    expect(await servedBy(await chat(buyer.key, trains.model.id, { data_collection: "deny" }))).toBe(trains.pricey.id);
    expect(await servedBy(await chat(buyer.key, trains.model.id, { data_collection: "allow" }))).toBe(trains.cheap.id);
  });

  it("max_price: the charge for 1M tokens at the model's list price and the offer's price, at most the bound, beside a sort", async () => {
    // At 100 cents per diem 1M prompt tokens cost 0.70 USD and 1M completion tokens 2.80; at 150 cents 1.05 and 4.20.
    const { model, offers } = await market([
      { price: 100, quality: { latencyMs: 900, tps: 20 } },
      { price: 150, quality: { latencyMs: 200, tps: 120 } },
    ]);
    const buyer = await seedBuyer(5n * ONE_USDC);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency" }))).toBe(offers[1].id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency", max_price: { completion: 4.19 } }))).toBe(offers[0].id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency", max_price: { prompt: 1.05 } }))).toBe(offers[1].id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency", max_price: { prompt: 1.049999 } }))).toBe(offers[0].id);
    const none = await chat(buyer.key, model.id, { max_price: { prompt: 0.699999, completion: 100 } });
    expect(none.status).toBe(503);
    expect((await errorOf(none)).code).toBe("no_offer_matches_provider_max_price");
  });

  it("require_parameters and allow_fallbacks are accepted and change nothing", async () => {
    const { model, cheap } = await cheapSlowPriceyFast();
    const buyer = await seedBuyer(5n * ONE_USDC);
    for (const provider of [
      { require_parameters: true },
      { require_parameters: false },
      { allow_fallbacks: false },
      { allow_fallbacks: true },
    ]) {
      expect(await servedBy(await chat(buyer.key, model.id, provider))).toBe(cheap.id);
    }
  });
});

describe("a 503 names the preference that left no offer and keeps the X-Svc-* headers", () => {
  async function expect503(res: Response, code: string, maxCents: number, cheapest: string) {
    expect(res.status).toBe(503);
    expect(res.headers.get("x-svc-error-code")).toBe(code);
    expect(res.headers.get("x-svc-buyer-max-cents")).toBe(String(maxCents));
    expect(res.headers.get("x-svc-cheapest-posted-cents")).toBe(cheapest);
    expect(res.headers.get("x-svc-routable-diem-above-max")).toMatch(/^\d+\.\d{6}$/);
    return errorOf(res);
  }

  it("only, ignore, quantizations, data_collection, max_price: each its own code, nothing held", async () => {
    const { model, cheap, pricey } = await cheapSlowPriceyFast({ cheap: { quantization: "int4", retainsPrompts: true } });
    const elsewhere = await market([{ price: 10 }]);
    const funded = 5n * ONE_USDC;
    const buyer = await seedBuyer(funded);
    const cases: [unknown, string][] = [
      [{ only: [elsewhere.offers[0].id] }, "no_offer_matches_provider_only"],
      [{ ignore: [cheap.id, pricey.id] }, "no_offer_matches_provider_ignore"],
      [{ quantizations: ["fp8"] }, "no_offer_matches_provider_quantizations"],
      // pricey, the only fp16 one, is ignored; cheap passes ignore and fails quantizations: the furthest filter reached
      [{ quantizations: ["fp16"], ignore: [pricey.id] }, "no_offer_matches_provider_quantizations"],
      // cheap is fp16-free and retains prompts: quantizations leave pricey, which data_collection then keeps
      [{ quantizations: ["int4"], data_collection: "deny" }, "no_offer_matches_provider_data_collection"],
      [{ max_price: { completion: 0.01 } }, "no_offer_matches_provider_max_price"],
    ];
    for (const [provider, code] of cases) {
      const error = await expect503(await chat(buyer.key, model.id, provider), code, 200, "80");
      expect(error.param).toBe(`provider.${code.slice("no_offer_matches_provider_".length)}`);
    }
    await expectNothingHeld(buyer, funded);
  });

  it("offers delisted by a failed fidelity probe: no_offer_passing_probes, not no_capacity", async () => {
    const { model } = await market([{ price: 80, probeDelisted: true }]);
    const buyer = await seedBuyer(5n * ONE_USDC);
    const error = await expect503(await chat(buyer.key, model.id), "no_offer_passing_probes", 200, "80");
    expect(error.message).toMatch(/fidelity probe/);
  });

  it("offers declaring a smaller output cap than the request's worst case: no_offer_fits_request; a request within it routes", async () => {
    // The model's output cap is 4,096: a request without max_tokens reserves that worst case.
    const { model, offers } = await market([
      { price: 80, maxOutputTokens: 1_000 },
      { price: 90, contextTokens: 2_000 },
    ]);
    const buyer = await seedBuyer(5n * ONE_USDC);
    const error = await expect503(
      await callCompletions(buyer.key, { model: model.id, messages: [hello] }, { "x-svc-max-cents": MAX_CENTS }),
      "no_offer_fits_request",
      200,
      "80",
    );
    expect(error.message).toMatch(/max_tokens/);
    expect(await servedBy(await chat(buyer.key, model.id, undefined, { max_tokens: 1_500 }))).toBe(offers[1].id);
    expect(await servedBy(await chat(buyer.key, model.id, undefined, { max_tokens: 1_000 }))).toBe(offers[0].id);
  });
});

describe("defaults on a key and an account, merged field by field under the request's", () => {
  it("a key pinned to data_collection: deny keeps it while the request's own sort applies; the request overrides a field", async () => {
    const { model, offers } = await market([
      { price: 60, retainsPrompts: true, quality: { latencyMs: 100, tps: 200 } },
      { price: 80, quality: { latencyMs: 2_000, tps: 20 } },
      { price: 150, quality: { latencyMs: 200, tps: 120 } },
    ]);
    const buyer = await seedBuyer(5n * ONE_USDC, { provider_preferences: { data_collection: "deny" } });
    expect(await servedBy(await chat(buyer.key, model.id))).toBe(offers[1].id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency" }))).toBe(offers[2].id);
    expect(await servedBy(await chat(buyer.key, model.id, { sort: "latency", data_collection: "allow" }))).toBe(offers[0].id);
    // A null field is an absent one: the key's default stays.
    expect(await servedBy(await chat(buyer.key, model.id, { data_collection: null }))).toBe(offers[1].id);
  });

  it("request over key over account: the account's sort and ignore, the key's sort over it, the request's over both", async () => {
    const { model, offers } = await market([
      { price: 60, quality: { latencyMs: 100, tps: 10 } },
      { price: 80, quality: { latencyMs: 2_000, tps: 20 } },
      { price: 150, quality: { latencyMs: 200, tps: 120 } },
    ]);
    const owner = await seedSignedInAccount();
    const set = await patchAccount(
      jsonRequest("PATCH", "/v1/account", { provider_preferences: { sort: "latency", ignore: [offers[0].id] } }, { cookie: owner.cookie }),
    );
    expect(set.status).toBe(200);
    expect((await set.json()).provider_preferences).toEqual({ sort: "latency", ignore: [offers[0].id] });
    await seedBuyerBalance(owner.id, 5n * ONE_USDC);
    const plain = await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", {}, { cookie: owner.cookie }));
    const sorted = await createKeyRoute(
      jsonRequest("POST", "/v1/account/api-keys", { provider_preferences: { sort: "throughput" } }, { cookie: owner.cookie }),
    );
    const [plainKey, sortedKey] = [await plain.json(), await sorted.json()];
    expect(sortedKey.provider_preferences).toEqual({ sort: "throughput" });

    expect(await servedBy(await chat(plainKey.key, model.id))).toBe(offers[2].id); // the account's: latency, offer 0 ignored
    expect(await servedBy(await chat(sortedKey.key, model.id))).toBe(offers[2].id); // the key's throughput, offer 0 still ignored
    expect(await servedBy(await chat(sortedKey.key, model.id, { sort: "price" }))).toBe(offers[1].id);
    expect(await servedBy(await chat(sortedKey.key, model.id, { ignore: [offers[2].id] }))).toBe(offers[1].id);

    // GET /v1/key shows the key's own defaults; PATCH changes and clears them.
    const seen = await currentKey(jsonRequest("GET", "/v1/key", undefined, { authorization: `Bearer ${sortedKey.key}` }));
    expect((await seen.json()).data.provider_preferences).toEqual({ sort: "throughput" });
    const cleared = await patchKey(
      jsonRequest("PATCH", `/v1/account/api-keys/${sortedKey.id}`, { provider_preferences: null }, { cookie: owner.cookie }),
      routeParams({ id: sortedKey.id }),
    );
    expect((await cleared.json()).provider_preferences).toBeNull();
    expect(await servedBy(await chat(sortedKey.key, model.id))).toBe(offers[2].id);
  });
});

describe("bad input: 400 naming the field, nothing held or charged", () => {
  it.each([
    ["an unknown provider field", { order: ["x"] }, "unknown_field", "provider.order"],
    ["a sort outside the list", { sort: "fastest" }, "invalid_request", "provider.sort"],
    ["a malformed id", { only: ["not-an-id"] }, "invalid_request", "provider.only.0"],
    ["an empty only", { only: [] }, "invalid_request", "provider.only"],
    ["65 ids", { ignore: Array.from({ length: 65 }, () => crypto.randomUUID()) }, "invalid_request", "provider.ignore"],
    ["a quantization outside the list", { quantizations: ["fp4"] }, "invalid_request", "provider.quantizations.0"],
    ["data_collection outside the list", { data_collection: "sometimes" }, "invalid_request", "provider.data_collection"],
    ["a negative max price", { max_price: { prompt: -1 } }, "invalid_request", "provider.max_price.prompt"],
    ["a max price beyond the bound", { max_price: { completion: 2_000_000 } }, "invalid_request", "provider.max_price.completion"],
    ["an unknown max_price field", { max_price: { request: 1 } }, "unknown_field", "provider.max_price.request"],
    ["a zero preferred_max_latency", { preferred_max_latency: 0 }, "invalid_request", "provider.preferred_max_latency"],
    ["a preferred_min_throughput as text", { preferred_min_throughput: "fast" }, "invalid_request", "provider.preferred_min_throughput"],
    ["require_parameters as text", { require_parameters: "yes" }, "invalid_request", "provider.require_parameters"],
    ["provider as a list", ["price"], "invalid_request", "provider"],
  ])("refuses %s", async (_label, provider, code, param) => {
    const { model } = await cheapSlowPriceyFast();
    const buyer = await seedBuyer(ONE_USDC);
    const res = await chat(buyer.key, model.id, provider);
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe(code);
    expect(error.param).toBe(param);
    await expectNothingHeld(buyer, ONE_USDC);
  });

  it("refuses well-formed ids that name no offer and no supplier, checked by the reservation itself", async () => {
    const { model, cheap } = await cheapSlowPriceyFast();
    const buyer = await seedBuyer(ONE_USDC);
    const stranger = await seedAccount(); // an account with no offers is no supplier
    for (const [provider, param] of [
      [{ only: [cheap.id, crypto.randomUUID()] }, "provider.only"],
      [{ ignore: [supplierPublicId(stranger.id)] }, "provider.ignore"],
      [{ only: [cheap.id], ignore: ["sup_0123456789abcdef01234567"] }, "provider.ignore"],
    ] as const) {
      const res = await chat(buyer.key, model.id, provider);
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error).toMatchObject({ code: "invalid_request", param });
    }
    await expectNothingHeld(buyer, ONE_USDC);
  });

  it("validates the defaults of a key and an account by the same schema, ids included", async () => {
    const owner = await seedSignedInAccount();
    const cases: [unknown, string][] = [
      [{ sort: "fastest" }, "provider_preferences.sort"],
      [{ only: [crypto.randomUUID()] }, "provider_preferences.only"],
      [{ colour: "blue" }, "provider_preferences.colour"],
    ];
    for (const [prefs, param] of cases) {
      const created = await createKeyRoute(
        jsonRequest("POST", "/v1/account/api-keys", { provider_preferences: prefs }, { cookie: owner.cookie }),
      );
      expect(created.status).toBe(400);
      expect((await errorOf(created)).param).toBe(param);
      const account = await patchAccount(jsonRequest("PATCH", "/v1/account", { provider_preferences: prefs }, { cookie: owner.cookie }));
      expect(account.status).toBe(400);
      expect((await errorOf(account)).param).toBe(param);
    }
    expect(await db.apiKey.count({ where: { accountId: owner.id } })).toBe(0);
    expect((await db.account.findUniqueOrThrow({ where: { id: owner.id } })).providerPreferences).toBeNull();
  });
});

it("GET /v1/models lists provider among every model's supported_parameters", async () => {
  await cheapSlowPriceyFast();
  const res = await listModelsRoute(jsonRequest("GET", "/v1/models"));
  const { data } = (await res.json()) as { data: { supported_parameters: string[] }[] };
  expect(data.length).toBeGreaterThan(0);
  for (const m of data) expect(m.supported_parameters).toContain("provider");
});
