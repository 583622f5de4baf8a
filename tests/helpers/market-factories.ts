/**
 * Market factories: private models, offers written directly, and clears at any time and price as the
 * completion hot path leaves them: hold (cleared) → completion → clear → its journal entry (buyer → supplier
 * + platform), with the offer-day burn raised to match, so the ledger invariants hold for them too.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { chargeMicros, splitCharge } from "@/lib/money";
import type { Features } from "@/lib/supply/features";
import { utcDay, utcDayKey } from "@/lib/supply/capacity";
import { encryptCredential } from "@/lib/upstream/key-encryption";
import { getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { postEntry } from "@/lib/ledger/post-entry";
import { PLATFORM_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";
import { seedAccount } from "./factories";
import { seedBuyerBalance } from "./ledger-factories";
import { DEMO_OFFERS } from "../../prisma/seed";

/** A catalog model only this test uses (other files run in parallel on the same database). */
export async function seedPrivateModel(
  overrides: Partial<{
    id: string;
    inputMicroDiemPerMTok: bigint;
    outputMicroDiemPerMTok: bigint;
    cacheReadMicroDiemPerMTok: bigint | null;
    supportsTools: boolean;
    supportsJsonSchema: boolean;
    supportsVision: boolean;
    billsReasoning: boolean;
    maxOutputTokens: number;
    contextTokens: number;
  }> = {},
) {
  return db.model.create({
    data: {
      id: overrides.id ?? `test-${randomBytes(5).toString("hex")}`,
      name: "Private test model",
      inputMicroDiemPerMTok: overrides.inputMicroDiemPerMTok ?? 700_000n,
      outputMicroDiemPerMTok: overrides.outputMicroDiemPerMTok ?? 2_800_000n,
      cacheReadMicroDiemPerMTok: overrides.cacheReadMicroDiemPerMTok ?? null,
      contextTokens: overrides.contextTokens ?? 32_768,
      maxOutputTokens: overrides.maxOutputTokens ?? 4_096,
      supportsTools: overrides.supportsTools ?? false,
      supportsJsonSchema: overrides.supportsJsonSchema ?? false,
      supportsVision: overrides.supportsVision ?? false,
      billsReasoning: overrides.billsReasoning ?? false,
    },
  });
}

export type SeedOfferOptions = {
  supplierId?: string;
  models: (string | { id: string; upstreamModel: string })[];
  priceCents: number;
  dailyCapacityMicroDiem: bigint;
  status?: "active" | "paused" | "withdrawn";
  unhealthyUntil?: Date | null;
  upstreamBaseUrl?: string;
  upstreamApiKey?: string;
  /** What the offer serves for each of its models (default: nothing beyond text). */
  features?: Partial<Features>;
  /** Prompt caching declared: the upstream caches prefixes, kept at least this many seconds (default: not declared). */
  caching?: { retentionSeconds: number };
};

/** An offer written directly (no upstream check), for market fixtures. */
export async function seedOffer(options: SeedOfferOptions) {
  const supplierId = options.supplierId ?? (await seedAccount()).id;
  return db.offer.create({
    data: {
      supplierId,
      upstreamBaseUrl: options.upstreamBaseUrl ?? "http://127.0.0.1:9/v1",
      upstreamKeyCiphertext: encryptCredential(options.upstreamApiKey ?? "seeded-offer-key"),
      priceCents: options.priceCents,
      dailyCapacityMicroDiem: options.dailyCapacityMicroDiem,
      status: options.status ?? "active",
      unhealthyUntil: options.unhealthyUntil ?? null,
      ...(options.caching && { cachesPrompts: true, cacheRetentionSeconds: options.caching.retentionSeconds }),
      consecutiveFailures: options.unhealthyUntil ? 1 : 0,
      models: {
        create: options.models.map((m) => ({
          ...(typeof m === "string" ? { modelId: m, upstreamModel: m } : { modelId: m.id, upstreamModel: m.upstreamModel }),
          supportsTools: options.features?.tools ?? false,
          supportsJsonSchema: options.features?.json_schema ?? false,
          supportsVision: options.features?.vision ?? false,
        })),
      },
    },
  });
}

let buyer: Promise<{ accountId: string; apiKeyId: string; ledgerAccountId: string }> | undefined;

/** One well-funded buyer (account, API key row, balance) per test file, the counterparty of every seeded clear. */
function seededBuyer() {
  buyer ??= (async () => {
    const account = await seedAccount();
    const key = await db.apiKey.create({
      data: { accountId: account.id, name: "market fixture", prefix: "svc_fixture", keyHash: randomBytes(32).toString("hex") },
    });
    const ledger = await seedBuyerBalance(account.id, 1_000_000n * 1_000_000n);
    return { accountId: account.id, apiKeyId: key.id, ledgerAccountId: ledger.id };
  })();
  return buyer;
}

/**
 * A clear of `burnMicroDiem` on an offer at `at` (default now), at the offer's price unless given, paid by the file's
 * fixture buyer unless `buyer` names another (an account with an API key row and a funded buyer ledger account).
 * Charge and split follow lib/money.ts; the burn is added to the offer-day of `at`.
 */
export async function seedClear(options: {
  offerId: string;
  modelId: string;
  burnMicroDiem: bigint;
  priceCents?: number;
  at?: Date;
  buyer?: { accountId: string; apiKeyId: string; ledgerAccountId: string };
}) {
  const at = options.at ?? new Date();
  const { accountId, apiKeyId, ledgerAccountId } = options.buyer ?? (await seededBuyer());
  const offer = await db.offer.findUniqueOrThrow({ where: { id: options.offerId } });
  const priceCents = options.priceCents ?? offer.priceCents;
  const charge = chargeMicros(options.burnMicroDiem, priceCents);
  const { supplierMicros, feeMicros } = splitCharge(charge, env.PLATFORM_FEE_BPS);
  const completionId = `chatcmpl-${randomUUID().replace(/-/g, "")}`;
  return db.$transaction(async (tx) => {
    const hold = await tx.hold.create({
      data: {
        accountId,
        apiKeyId,
        offerId: options.offerId,
        modelId: options.modelId,
        day: utcDay(at),
        priceCents,
        amountMicros: charge,
        burnMicroDiem: options.burnMicroDiem,
        status: "cleared",
        expiresAt: new Date(at.getTime() + 60_000),
        createdAt: at,
        settledAt: at,
      },
    });
    await tx.completion.create({
      data: {
        id: completionId,
        holdId: hold.id,
        accountId,
        apiKeyId,
        offerId: options.offerId,
        modelId: options.modelId,
        promptTokens: 100,
        completionTokens: 100,
        latencyMs: 50,
        createdAt: at,
      },
    });
    const clear = await tx.clear.create({
      data: {
        completionId,
        offerId: options.offerId,
        modelId: options.modelId,
        priceCents,
        burnMicroDiem: options.burnMicroDiem,
        chargeMicros: charge,
        supplierMicros,
        feeMicros,
        createdAt: at,
      },
    });
    const supplier = await getOrCreateLedgerAccount(tx, "supplier", offer.supplierId);
    const lines = [
      { ledgerAccountId, amountMicros: -charge },
      { ledgerAccountId: supplier.id, amountMicros: supplierMicros },
      { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: feeMicros },
    ].filter((l) => l.amountMicros !== 0n);
    if (lines.length > 0) await postEntry(tx, { kind: "clear", clearId: clear.id, lines });
    await tx.$executeRaw`
      INSERT INTO offer_days (offer_id, day, burned_micro_diem, held_micro_diem, clears, earned_micros)
      VALUES (${options.offerId}::uuid, ${utcDayKey(at)}::date, ${options.burnMicroDiem}, 0, 1, ${supplierMicros})
      ON CONFLICT (offer_id, day) DO UPDATE SET burned_micro_diem = offer_days.burned_micro_diem + EXCLUDED.burned_micro_diem,
        clears = offer_days.clears + 1, earned_micros = offer_days.earned_micros + EXCLUDED.earned_micros`;
    return clear;
  });
}

/** An in-flight reservation: an active hold and the offer-day's held capacity raised to match. */
export async function seedActiveHold(options: { offerId: string; modelId: string; burnMicroDiem: bigint; at?: Date }) {
  const at = options.at ?? new Date();
  const { accountId, apiKeyId } = await seededBuyer();
  return db.$transaction(async (tx) => {
    const hold = await tx.hold.create({
      data: {
        accountId,
        apiKeyId,
        offerId: options.offerId,
        modelId: options.modelId,
        day: utcDay(at),
        priceCents: 100,
        amountMicros: 0n,
        burnMicroDiem: options.burnMicroDiem,
        expiresAt: new Date(at.getTime() + 60_000),
        createdAt: at,
      },
    });
    await tx.$executeRaw`
      INSERT INTO offer_days (offer_id, day, burned_micro_diem, held_micro_diem)
      VALUES (${options.offerId}::uuid, ${utcDayKey(at)}::date, 0, ${options.burnMicroDiem})
      ON CONFLICT (offer_id, day) DO UPDATE SET held_micro_diem = offer_days.held_micro_diem + EXCLUDED.held_micro_diem`;
    return hold;
  });
}

/** A private model with one offer at list price on `upstream` (a canned or reference upstream), for router tests. */
export async function seedMarketOn(upstream: { url: string; apiKey: string }, options: { tools?: boolean; billsReasoning?: boolean } = {}) {
  const model = await seedPrivateModel({
    supportsTools: options.tools ?? false,
    billsReasoning: options.billsReasoning ?? false,
    maxOutputTokens: 8_192,
  });
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "canned-model" }],
    priceCents: 100,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
    features: { tools: options.tools ?? false },
  });
  return { model, offer };
}

/**
 * The stock dev market's offers (prisma/seed.ts DEMO_OFFERS: prices, capacities and declarations) on one model, on
 * `upstream`, which answers as `upstreamModel`: for tests of what the docs promise on the dev stack.
 */
export async function seedDemoOffers(
  modelId: string,
  upstream: { url: string; apiKey: string },
  options: { upstreamModel: string; features?: SeedOfferOptions["features"] },
) {
  const offers = [];
  for (const demo of DEMO_OFFERS) {
    const offer = await seedOffer({
      models: [{ id: modelId, upstreamModel: options.upstreamModel }],
      priceCents: demo.priceCents,
      dailyCapacityMicroDiem: BigInt(demo.dailyCapacityDiem) * 1_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
      ...(options.features && { features: options.features }),
    });
    offers.push(await db.offer.update({ where: { id: offer.id }, data: demo.declared }));
  }
  return offers;
}
