/** keys create | list | edit | revoke, and balance: session routes under /v1/account; key: GET /v1/key with the API key. */
import { LIMIT_RESETS, type ApiKeyView, type CreatedApiKey, type CurrentKey, type LimitReset } from "../../lib/auth/schemas";
import type { BalanceView } from "../../lib/account/schemas";
import { callApi, type Context } from "./api";
import { CliError, EXIT } from "./errors";
import { usd } from "./output";
import { assertUsdAmount } from "./topup";

// The wire shapes the service answers with, from its client-safe schema modules.
export type { ApiKeyView };
export type CreatedKey = CreatedApiKey;
export type Balance = BalanceView;

export type CreateKeyOptions = { name?: string; maxCents?: string; spendLimit?: string; limitReset?: string };

/** --limit-reset: daily, weekly or monthly; "none" (edit only) makes the limit a lifetime one again. */
export function parseLimitReset(value: string | undefined, allowNone: boolean): LimitReset | null | undefined {
  if (value === undefined) return undefined;
  if (allowNone && value === "none") return null;
  if ((LIMIT_RESETS as readonly string[]).includes(value)) return value as LimitReset;
  throw new CliError(
    `--limit-reset must be ${LIMIT_RESETS.join(", ")}${allowNone ? " or none" : ""} (UTC; weeks start on Monday), got ${JSON.stringify(value)}.`,
    EXIT.usage,
    "invalid_limit_reset",
  );
}

export function parseCents(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const cents = Number(value);
  if (!/^\d{1,5}$/.test(value) || cents < 1 || cents > 10_000) {
    throw new CliError(
      `${what} must be an integer from 1 to 10000 (cents per diem; 100 = list price), got ${JSON.stringify(value)}.`,
      EXIT.usage,
      "invalid_cents",
    );
  }
  return cents;
}

export async function createKey(ctx: Context, options: CreateKeyOptions): Promise<CreatedKey> {
  const body = {
    ...(options.name ? { name: options.name } : {}),
    ...(options.maxCents !== undefined ? { max_price_cents: parseCents(options.maxCents, "--max-cents") } : {}),
    ...(options.spendLimit !== undefined ? { spend_limit: assertUsdAmount(options.spendLimit, "--spend-limit") } : {}),
    ...(options.limitReset !== undefined ? { limit_reset: parseLimitReset(options.limitReset, false) } : {}),
  };
  const { data } = await callApi<CreatedKey>(ctx, "/v1/account/api-keys", { method: "POST", body, session: true });
  ctx.store.saveApiKey(ctx.config.baseUrl, { id: data.id, prefix: data.prefix, key: data.key });
  return data;
}

export async function listKeys(ctx: Context): Promise<ApiKeyView[]> {
  const { data } = await callApi<{ data: ApiKeyView[] }>(ctx, "/v1/account/api-keys", { session: true });
  return data.data;
}

/** Edits a key: only the options given change; "none" clears --max-cents, --spend-limit or --limit-reset. */
export async function editKey(ctx: Context, id: string | undefined, options: CreateKeyOptions): Promise<ApiKeyView> {
  if (!id) throw new CliError("keys edit needs the key's id (see `keys list`).", EXIT.usage, "missing_key_id");
  const orNone = <T>(value: string | undefined, parse: (v: string) => T) =>
    value === undefined ? undefined : value === "none" ? null : parse(value);
  const body = {
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.maxCents !== undefined ? { max_price_cents: orNone(options.maxCents, (v) => parseCents(v, "--max-cents")) } : {}),
    ...(options.spendLimit !== undefined ? { spend_limit: orNone(options.spendLimit, (v) => assertUsdAmount(v, "--spend-limit")) } : {}),
    ...(options.limitReset !== undefined ? { limit_reset: parseLimitReset(options.limitReset, true) } : {}),
  };
  if (Object.keys(body).length === 0) {
    throw new CliError("keys edit needs something to change: --name, --max-cents, --spend-limit or --limit-reset.", EXIT.usage, "usage");
  }
  const path = `/v1/account/api-keys/${encodeURIComponent(id)}`;
  return (await callApi<ApiKeyView>(ctx, path, { method: "PATCH", body, session: true })).data;
}

/** GET /v1/key with an API key: the key's limits and usage, as it sees them. */
export async function currentKey(ctx: Context, apiKey: string): Promise<CurrentKey["data"]> {
  const { data } = await callApi<CurrentKey>(ctx, "/v1/key", { headers: { authorization: `Bearer ${apiKey}` } });
  return data.data;
}

export function formatCurrentKey(k: CurrentKey["data"]): string {
  const limit =
    k.limit === null
      ? "no spend limit"
      : `limit ${usd(k.limit)} USDC ${k.limit_reset ?? "lifetime"}, ${usd(k.limit_remaining)} remaining` +
        (k.limit_resets_at ? ` (resets ${k.limit_resets_at})` : "");
  return [
    `${k.name} (${k.prefix}…, id ${k.id}): ${limit}`,
    `usage ${usd(k.usage)} USDC in all · ${usd(k.usage_daily)} today · ${usd(k.usage_weekly)} this week · ${usd(k.usage_monthly)} this month (UTC)`,
    `max price ${k.max_price_cents === null ? "account default" : `${k.max_price_cents} cents/diem`} · ` +
      `rate limit ${k.rate_limit.requests} requests per ${k.rate_limit.interval}` +
      (k.expires_at ? ` · expires ${k.expires_at}` : ""),
  ].join("\n");
}

export async function revokeKey(ctx: Context, id: string | undefined): Promise<ApiKeyView> {
  if (!id) throw new CliError("keys revoke needs the key's id (see `keys list`).", EXIT.usage, "missing_key_id");
  const { data } = await callApi<ApiKeyView>(ctx, `/v1/account/api-keys/${encodeURIComponent(id)}`, { method: "DELETE", session: true });
  ctx.store.forgetApiKey(ctx.config.baseUrl, id);
  return data;
}

export async function getBalance(ctx: Context): Promise<Balance> {
  return (await callApi<Balance>(ctx, "/v1/account/balance", { session: true })).data;
}

export function keyStatus(key: ApiKeyView, now = Date.now()): "active" | "revoked" | "expired" {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && new Date(key.expires_at).getTime() <= now) return "expired";
  return "active";
}

export function describeKeyLimits(key: ApiKeyView): string {
  const max = key.max_price_cents === null ? "max: account default" : `max ${key.max_price_cents} cents/diem`;
  if (key.spend_limit === null) return `${max}, no spend limit`;
  if (key.limit_reset === null) return `${max}, spend limit ${usd(key.spend_limit)} USDC`;
  const period = `${usd(key.period_spent)} spent this period, resets ${key.limit_resets_at}`;
  return `${max}, spend limit ${usd(key.spend_limit)} USDC ${key.limit_reset} (${period})`;
}

export function formatKeyTable(keys: ApiKeyView[]): string {
  if (keys.length === 0) return "No API keys yet: `npm run agent -- keys create`.";
  const rows = keys.map((k) => [
    k.id,
    k.name,
    `${k.prefix}…`,
    keyStatus(k),
    `${usd(k.spent)} spent`,
    describeKeyLimits(k),
    k.last_used_at ? `used ${k.last_used_at}` : "never used",
  ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
