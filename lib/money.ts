/**
 * Money and capacity as BigInt micro-units (6 decimals): micro-USDC and micro-diem. Client-safe and pure.
 * Decimal strings are parsed with integer arithmetic only (a float turns "2.01" into 2009999).
 * burnMicroDiem, chargeMicros, cachedPromptTokens, meteredCharge and splitCharge mirror the SQL rules the reservation
 * and the clear apply (prisma/functions/svc_burn_micro_diem.sql, svc_cached_burn_micro_diem.sql, svc_charge_micros.sql,
 * svc_cached_prompt_tokens.sql, svc_metered_charge.sql, svc_supplier_micros.sql, svc_fee_micros.sql): the
 * SQL is the rule, these let the dashboard preview a supplier's earnings and the server estimate a cost by the same
 * arithmetic, and tests/integration/money-rules.test.ts holds them to the SQL on thousands of random inputs.
 */

export const MICROS_PER_UNIT = 1_000_000n;

const DECIMAL = /^(\d{1,15})(?:\.(\d{1,6}))?$/;

/** "12.5" → 12_500_000n. Rejects signs, exponents, more than 6 decimals, and empty parts. Returns null when invalid. */
export function parseMicros(input: string): bigint | null {
  const match = DECIMAL.exec(input);
  if (!match) return null;
  const [, whole, fraction = ""] = match;
  return BigInt(whole) * MICROS_PER_UNIT + BigInt(fraction.padEnd(6, "0"));
}

/** 12_500_000n → "12.500000" (always six places; negative amounts keep their sign). */
export function formatMicros(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  const fraction = (abs % MICROS_PER_UNIT).toString().padStart(6, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}

/** ceil(a / b) for non-negative bigints. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  if (a < 0n || b <= 0n) throw new RangeError("ceilDiv expects a >= 0 and b > 0");
  return (a + b - 1n) / b;
}

/**
 * burn in micro-diem = tokens x list price (micro-diem per 1M tokens) / 1M, rounded up so capacity is never
 * under-counted (svc_burn_micro_diem). `cachedTokens` of the prompt (at most all of it) are at the cache-read price
 * when the model has one, else at the input price (svc_cached_burn_micro_diem).
 */
export function burnMicroDiem(
  promptTokens: number,
  completionTokens: number,
  price: { inputMicroDiemPerMTok: bigint; outputMicroDiemPerMTok: bigint; cacheReadMicroDiemPerMTok?: bigint | null },
  cachedTokens = 0,
): bigint {
  const cached = BigInt(Math.min(cachedTokens, promptTokens));
  const scaled =
    (BigInt(promptTokens) - cached) * price.inputMicroDiemPerMTok +
    cached * (price.cacheReadMicroDiemPerMTok ?? price.inputMicroDiemPerMTok) +
    BigInt(completionTokens) * price.outputMicroDiemPerMTok;
  return ceilDiv(scaled, 1_000_000n);
}

/**
 * The prompt tokens billed at the cache-read price (svc_cached_prompt_tokens): on an offer that caches, the larger
 * of the upstream's claim and svc's figure of the prefix it sent that offer within its retention, within the prompt;
 * 0 on an offer that does not declare caching. null figures count as 0.
 */
export function cachedPromptTokens(
  promptTokens: number,
  claimedCachedTokens: number | null,
  sentCachedTokens: number | null,
  offerCaches: boolean,
): number {
  if (!offerCaches) return 0;
  return Math.min(promptTokens, Math.max(claimedCachedTokens ?? 0, sentCachedTokens ?? 0, 0));
}

/**
 * charge in micro-USDC = ceil(burn x price cents / 100): one diem at 100 cents costs one USDC (svc_charge_micros, which
 * refuses a burn x price + 99 beyond 2^63 - 1; exact here).
 */
export function chargeMicros(burn: bigint, priceCents: number): bigint {
  return ceilDiv(burn * BigInt(priceCents), 100n);
}

/**
 * One token's price in USD as a decimal string (OpenRouter's `pricing.prompt` and `pricing.completion`): the burn and
 * charge rules above applied to 1M tokens at `listMicroDiemPerMTok` and `priceCents`, divided by 1M exactly (so it is
 * what a million tokens cost, to the micro-USDC, per token; a request's own charge rounds up once, on its total).
 * Trailing zeros are dropped: 0.8 diem per 1M tokens at 100 cents is "0.0000008".
 */
export function usdPerToken(listMicroDiemPerMTok: bigint, priceCents: number): string {
  const burn = burnMicroDiem(1_000_000, 0, { inputMicroDiemPerMTok: listMicroDiemPerMTok, outputMicroDiemPerMTok: 0n });
  // Micro-USDC per 1M tokens is USD per token × 10^12.
  const picoUsd = chargeMicros(burn, priceCents);
  const whole = picoUsd / 10n ** 12n;
  const fraction = (picoUsd % 10n ** 12n).toString().padStart(12, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

/**
 * What an answer costs against its reservation (svc_metered_charge, which the clear and a probe's settle apply): the
 * burn at the reserved list prices capped at the reserved burn, and its charge at the reserved price capped at the
 * reserved amount.
 */
export function meteredCharge(input: {
  promptTokens: number;
  /** Of the prompt tokens, those billed at the cache-read price (cachedPromptTokens); default 0. */
  cachedTokens?: number;
  completionTokens: number;
  prices: { inputMicroDiemPerMTok: bigint; outputMicroDiemPerMTok: bigint; cacheReadMicroDiemPerMTok?: bigint | null };
  priceCents: number;
  reservedBurnMicroDiem: bigint;
  reservedMicros: bigint;
}): { burnMicroDiem: bigint; chargeMicros: bigint } {
  const burn = burnMicroDiem(input.promptTokens, input.completionTokens, input.prices, input.cachedTokens ?? 0);
  const capped = burn < input.reservedBurnMicroDiem ? burn : input.reservedBurnMicroDiem;
  const charge = chargeMicros(capped, input.priceCents);
  return { burnMicroDiem: capped, chargeMicros: charge < input.reservedMicros ? charge : input.reservedMicros };
}

/**
 * The supplier gets floor(charge x (1 - fee)); the platform the rest, so the two always add up to the charge
 * (svc_supplier_micros, svc_fee_micros).
 */
export function splitCharge(charge: bigint, feeBps: number): { supplierMicros: bigint; feeMicros: bigint } {
  const supplierMicros = (charge * BigInt(10_000 - feeBps)) / 10_000n;
  return { supplierMicros, feeMicros: charge - supplierMicros };
}
