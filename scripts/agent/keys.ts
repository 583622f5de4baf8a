/** keys create | list | revoke, and balance: session routes under /v1/account. */
import type { ApiKeyView, CreatedApiKey } from "../../lib/auth/schemas";
import type { BalanceView } from "../../lib/account/schemas";
import { callApi, type Context } from "./api";
import { CliError, EXIT } from "./errors";
import { usd } from "./output";
import { assertUsdAmount } from "./topup";

// The wire shapes the service answers with, from its client-safe schema modules.
export type { ApiKeyView };
export type CreatedKey = CreatedApiKey;
export type Balance = BalanceView;

export type CreateKeyOptions = { name?: string; maxCents?: string; spendLimit?: string };

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
  };
  const { data } = await callApi<CreatedKey>(ctx, "/v1/account/api-keys", { method: "POST", body, session: true });
  ctx.store.saveApiKey(ctx.config.baseUrl, { id: data.id, prefix: data.prefix, key: data.key });
  return data;
}

export async function listKeys(ctx: Context): Promise<ApiKeyView[]> {
  const { data } = await callApi<{ data: ApiKeyView[] }>(ctx, "/v1/account/api-keys", { session: true });
  return data.data;
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
  const limit = key.spend_limit === null ? "no spend limit" : `spend limit ${usd(key.spend_limit)} USDC`;
  return `${max}, ${limit}`;
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
