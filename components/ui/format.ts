/**
 * Display formatting for the wire's decimal strings (6 places for USDC and diem). Integer arithmetic
 * only, like the server (lib/money.ts): a float would turn "2.01" into 2.0099999.
 *
 * The number policy, the one place it is written (every component formats through this file; no toFixed,
 * Intl.NumberFormat or "+ ' diem'" elsewhere):
 *
 * 1. Balances and totals (what an account holds, has spent or earned; capacity left) are shown at cents (diem
 *    at two places), rounded toward zero so a figure never shows more than is there, and "<$0.01" for a
 *    non-zero amount under a cent: `formatUsdCents`, `formatDiemCents`. The exact value is a hover (title) or a
 *    tap away and is read out to screen readers: components/ui/amount.tsx renders both.
 * 2. Money about to move is exact, every digit it has: the amount on a top-up or withdraw button, in a
 *    confirmation, in what the wallet signs, a form's bounds. `formatUsd` ("$1.234567", "$2.00"); it never rounds.
 * 3. A column has one number of decimals: the most any of its values needs (2..6 for dollars, 0..6 for diem, 0..2
 *    for percentages), so $0.001119 sits over $0.000810, never over $0.00081, and 38.0% over 34.3%:
 *    `usdColumn`, `diemColumn`, `percentColumn`. Since the decimals are the most any value needs, no
 *    value in a column is rounded.
 * 4. A number and its unit never wrap apart: they are joined by a no-break space (U+00A0), "374.99 diem",
 *    "80¢ / diem", "1,234 ms" (`withUnit`), and the amount component is `white-space: nowrap`.
 * 5. Deterministic: en-US grouping, UTC times, the same text on the server and in the browser.
 */
import { parseMicros } from "@/lib/money";

/** A wire decimal ("12.500000", "-1.000000") or a validated form amount → micros; 0 for anything else. */
export function microsOf(value: string | bigint): bigint {
  if (typeof value === "bigint") return value;
  const text = value.trim();
  const negative = text.startsWith("-");
  const micros = parseMicros(negative ? text.slice(1) : text) ?? 0n;
  return negative ? -micros : micros;
}

const group = (whole: bigint) => whole.toLocaleString("en-US");

/** The no-break space that keeps a number and its unit on one line. */
export const NBSP = "\u00a0";

/** "374.99" + "diem" → "374.99 diem" with a no-break space: the unit never wraps onto a line of its own. */
export function withUnit(value: string, unit: string): string {
  return `${value}${NBSP}${unit.replace(/ /g, NBSP)}`;
}

/**
 * micros → "1,234.5" with `min`..`max` decimals, rounded half up at `max` (or toward zero with `truncate`);
 * trailing zeros beyond `min` are dropped.
 */
function formatDecimal(micros: bigint, min: number, max: number, { truncate = false }: { truncate?: boolean } = {}): string {
  const negative = micros < 0n;
  let abs = negative ? -micros : micros;
  const step = 10n ** BigInt(6 - max);
  abs = ((abs + (truncate ? 0n : step / 2n)) / step) * step;
  const whole = abs / 1_000_000n;
  let fraction = (abs % 1_000_000n).toString().padStart(6, "0").slice(0, max);
  while (fraction.length > min && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  return `${negative && abs > 0n ? "-" : ""}${group(whole)}${fraction ? `.${fraction}` : ""}`;
}

/** How many decimals an amount needs to be shown exactly: 1_500_000n → 1, 810n → 5, 12_000_000n → 0. */
export function decimalsNeeded(micros: bigint): number {
  let rest = (micros < 0n ? -micros : micros) % 1_000_000n;
  if (rest === 0n) return 0;
  let places = 6;
  while (rest % 10n === 0n) {
    rest /= 10n;
    places--;
  }
  return places;
}

const dollars = (body: string) => (body.startsWith("-") ? `-$${body.slice(1)}` : `$${body}`);

/**
 * Money about to move, and anything else that must be exact (policy 2): "$1,234.50", and never fewer digits than
 * the amount has ("$1.234567" stays "$1.234567", "$0.00027" stays whole). Two decimals when they are exact, more
 * only when the amount needs them, so what a button says is what moves. Rounding is only for chart axes
 * (`approx`), where the exact value is one hover away.
 */
export function formatUsd(value: string | bigint, { approx = false }: { approx?: boolean } = {}): string {
  const micros = microsOf(value);
  const abs = micros < 0n ? -micros : micros;
  return dollars(approx && abs >= 10_000n ? formatDecimal(micros, 2, 2) : formatDecimal(micros, 2, 6));
}

/**
 * A balance or total at cents (policy 1), rounded toward zero: $65.247062 → "$65.24" (never more than is there),
 * and "<$0.01" for a positive amount under a cent. Pair it with the exact value (components/ui/amount.tsx).
 */
export function formatUsdCents(value: string | bigint): string {
  const micros = microsOf(value);
  if (micros > 0n && micros < 10_000n) return "<$0.01";
  if (micros < 0n && micros > -10_000n) return "-<$0.01";
  return dollars(formatDecimal(micros, 2, 2, { truncate: true }));
}

/** Dollars with exactly `decimals` places (2..6), rounded half up: the cell format of a column (see usdColumn). */
export function formatUsdFixed(value: string | bigint, decimals: number): string {
  const places = Math.min(6, Math.max(2, decimals));
  return dollars(formatDecimal(microsOf(value), places, places));
}

/**
 * One format for a column of dollar amounts (policy 3): as many decimals as the most precise value needs (2..6),
 * the same for every row. `usdColumn(["0.001119", "0.00081"])` formats them "$0.001119" and "$0.000810".
 */
export function usdColumn(values: readonly (string | bigint)[]): (value: string | bigint) => string {
  const places = Math.max(2, ...values.map((v) => decimalsNeeded(microsOf(v))));
  return (value) => formatUsdFixed(value, places);
}

/** "25 diem", "0.00014 diem", "1,250.5 diem": every digit the amount has, trailing zeros dropped, unit on the same line. */
export function formatDiem(value: string | bigint, { unit = true, decimals }: { unit?: boolean; decimals?: number } = {}): string {
  const body = decimals === undefined ? formatDecimal(microsOf(value), 0, 6) : formatDecimal(microsOf(value), decimals, decimals);
  return unit ? withUnit(body, "diem") : body;
}

/** Capacity as a headline figure (policy 1): two places toward zero, "374.99 diem"; "<0.01 diem" under a hundredth. */
export function formatDiemCents(value: string | bigint, { unit = true }: { unit?: boolean } = {}): string {
  const micros = microsOf(value);
  const body = micros > 0n && micros < 10_000n ? "<0.01" : formatDecimal(micros, 0, 2, { truncate: true });
  return unit ? withUnit(body, "diem") : body;
}

/** One format for a column of diem (policy 3): the most decimals any value needs (0..6), for every row. */
export function diemColumn(
  values: readonly (string | bigint)[],
  { unit = true }: { unit?: boolean } = {},
): (value: string | bigint) => string {
  const places = Math.max(0, ...values.map((v) => decimalsNeeded(microsOf(v))));
  return (value) => formatDiem(value, { unit, decimals: places });
}

/** "1 request", "2 requests": counts on screen agree with their noun. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatInteger(n)} ${n === 1 ? one : many}`;
}

/** Offer price: "80¢". */
export function formatCents(cents: number | null | undefined): string {
  return cents === null || cents === undefined ? "—" : `${cents}¢`;
}

/** A price per diem that never wraps: "80¢ / diem" (no-break spaces). */
export function formatPricePerDiem(cents: number | null | undefined): string {
  return cents === null || cents === undefined ? "—" : withUnit(formatCents(cents), "/ diem");
}

/** Micro-USDC as cents, exactly: 787_500n → "78.75¢" (a supplier's share of a price per diem). */
export function formatMicrosAsCents(micros: bigint): string {
  const whole = micros / 10_000n;
  const fraction = (micros % 10_000n).toString().padStart(4, "0").replace(/0+$/, "");
  return `${whole}${fraction ? `.${fraction}` : ""}¢`;
}

/** A decimal string of cents ("87.46") rounded to one place without floats: "87.5¢". */
export function formatDecimalCents(value: string): string {
  return `${formatDecimal(microsOf(value), 1, 1)}¢`;
}

/** Basis points as a percentage, exactly: 1000 → "10%", 1250 → "12.5%", 8750 → "87.5%". */
export function formatBps(bps: number): string {
  const fraction = String(bps % 100)
    .padStart(2, "0")
    .replace(/0+$/, "");
  return `${Math.trunc(bps / 100)}${fraction ? `.${fraction}` : ""}%`;
}

/** "20% below list", "at list", "15% above list" (100 cents per diem is the list price). */
export function priceVsList(cents: number): string {
  if (cents === 100) return "at list price";
  const pct = Math.abs(100 - cents);
  return cents < 100 ? `${pct}% below list` : `${pct}% above list`;
}

export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

export function shortHash(hash: string): string {
  return hash.length > 18 ? `${hash.slice(0, 10)}…${hash.slice(-6)}` : hash;
}

const DATE_TIME = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hour12: false,
  timeZone: "UTC",
});
const TIME = new Intl.DateTimeFormat("en-US", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false, timeZone: "UTC" });
const DAY = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

/** Deterministic (UTC) so server and browser render the same text. */
export function formatDateTime(iso: string): string {
  return `${DATE_TIME.format(new Date(iso))} UTC`;
}

export function formatTime(iso: string): string {
  return TIME.format(new Date(iso));
}

/** "Nov 26, 14:05" and "Nov 26" of an instant (ms), in UTC, without the zone: for a chart that says UTC once. */
export function shortDateTimeAt(ms: number): string {
  return DATE_TIME.format(ms);
}

export function shortDayAt(ms: number): string {
  return DAY.format(ms);
}

export function formatDay(isoDay: string): string {
  return DAY.format(new Date(`${isoDay}T00:00:00Z`));
}

/** Decimals a percentage needs at most one place of precision (two under 1%): 0.38 → 0, 0.343 → 1, 0.004 → 2. */
function percentDecimals(ratio: number): number {
  if (ratio > 0 && ratio < 0.01) return 2;
  const tenths = Math.round(ratio * 1000);
  return tenths % 10 === 0 ? 0 : 1;
}

/** A ratio as a percentage: "38.0%", "34.3%", "0.42%"; `decimals` fixes the places (a column's, see percentColumn). */
export function formatPercent(ratio: number, { decimals }: { decimals?: number } = {}): string {
  return `${(ratio * 100).toFixed(decimals ?? (ratio > 0 && ratio < 0.01 ? 2 : 1))}%`;
}

/** One format for a column of percentages (policy 3): 38.0% over 34.3%, never 38% over 34.3%. */
export function percentColumn(ratios: readonly number[]): (ratio: number) => string {
  const decimals = Math.max(0, ...ratios.map(percentDecimals));
  return (ratio) => formatPercent(ratio, { decimals });
}

export function formatInteger(n: number): string {
  return n.toLocaleString("en-US");
}

/** "1,234 ms" on one line. */
export function formatMs(ms: number): string {
  return withUnit(formatInteger(ms), "ms");
}

/** "1,234 tokens" on one line (a count with its noun, singular for 1). */
export function formatTokens(n: number, noun = "tokens"): string {
  return withUnit(formatInteger(n), n === 1 ? noun.replace(/s$/, "") : noun);
}
