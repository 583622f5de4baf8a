/**
 * Display formatting for the wire's decimal strings (6 places for USDC and diem). Integer arithmetic
 * only, like the server (lib/money.ts): a float would turn "2.01" into 2.0099999.
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

/** micros → "1,234.5" with `min`..`max` decimals, rounded half up at `max`. */
function formatDecimal(micros: bigint, min: number, max: number): string {
  const negative = micros < 0n;
  let abs = negative ? -micros : micros;
  const step = 10n ** BigInt(6 - max);
  abs = ((abs + step / 2n) / step) * step;
  const whole = abs / 1_000_000n;
  let fraction = (abs % 1_000_000n).toString().padStart(6, "0").slice(0, max);
  while (fraction.length > min && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  return `${negative ? "-" : ""}${group(whole)}${fraction ? `.${fraction}` : ""}`;
}

/**
 * The one money formatter for the screen: "$1,234.50", and never fewer digits than the amount has
 * ("$1.234567" stays "$1.234567", "$0.00027" stays whole). Two decimals when they are exact, more only when
 * the amount needs them, so what a button or a balance says is what moves. Rounding is only for chart axes
 * (`approx`), where the exact value is one hover away.
 */
export function formatUsd(value: string | bigint, { approx = false }: { approx?: boolean } = {}): string {
  const micros = microsOf(value);
  const abs = micros < 0n ? -micros : micros;
  const body = approx && abs >= 10_000n ? formatDecimal(micros, 2, 2) : formatDecimal(micros, 2, 6);
  return body.startsWith("-") ? `-$${body.slice(1)}` : `$${body}`;
}

/** "25 diem", "0.00014 diem", "1,250.5 diem": every digit the amount has, trailing zeros dropped. */
export function formatDiem(value: string | bigint, { unit = true }: { unit?: boolean } = {}): string {
  const body = formatDecimal(microsOf(value), 0, 6);
  return unit ? `${body} diem` : body;
}

/** "1 request", "2 requests": counts on screen agree with their noun. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatInteger(n)} ${n === 1 ? one : many}`;
}

/** Offer price: "80¢ / diem". */
export function formatCents(cents: number | null | undefined): string {
  return cents === null || cents === undefined ? "—" : `${cents}¢`;
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

export function formatDay(isoDay: string): string {
  return DAY.format(new Date(`${isoDay}T00:00:00Z`));
}

export function formatPercent(ratio: number): string {
  return `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.01 ? 2 : 1)}%`;
}

export function formatInteger(n: number): string {
  return n.toLocaleString("en-US");
}
