/**
 * run: the spec's headless agent flow in one go: login → top up if the balance is low → an API key → one chat. The key
 * is the one saved for this base URL while it is live (so running it again makes no new key), else a new one with a
 * small daily spend limit (--key-limit), never an unlimited one.
 */
import type { Context } from "./api";
import { chat, pickModel, type ChatResult } from "./chat";
import { CliError, EXIT } from "./errors";
import { createKey, currentKey, getBalance, parseCents, type Balance } from "./keys";
import { login, type LoginResult } from "./login";
import { usd } from "./output";
import { assertUsdAmount, topUp, type TopUpResult } from "./topup";

export type RunOptions = {
  prompt: string;
  model?: string;
  maxCents?: string;
  maxTokens: string;
  /** Top up when the available balance is below this (USD). */
  minBalance: string;
  topUpAmount: string;
  /** The daily spend limit (USD) of the key run creates when none is saved. */
  keyLimit: string;
};

export type RunResult = {
  login: LoginResult;
  balance_before: Balance;
  top_up: TopUpResult | null;
  key: RunKey;
  completion: ChatResult;
};

/** The key run called with: the saved one (`reused`), or one it created with a daily spend limit. */
export type RunKey = { id: string; name: string; prefix: string; key: string; reused: boolean; max_price_cents: number | null };

export async function runFlow(ctx: Context, options: RunOptions, step: (text: string) => void): Promise<RunResult> {
  const minBalance = toMicros(assertUsdAmount(options.minBalance, "--min-balance"));
  assertUsdAmount(options.topUpAmount, "--topup-amount");
  assertUsdAmount(options.keyLimit, "--key-limit");
  const maxCents = parseCents(options.maxCents, "--max-cents");
  if (toMicros(options.topUpAmount) < minBalance) {
    throw new CliError(
      "--topup-amount must be at least --min-balance, or the balance stays low after topping up.",
      EXIT.usage,
      "invalid_amount",
    );
  }

  const session = await login(ctx, () => {});
  step(`1/4 signed in as ${session.address}`);

  const balanceBefore = await getBalance(ctx);
  let topped: TopUpResult | null = null;
  if (toMicros(balanceBefore.available) < minBalance) {
    topped = await topUp(ctx, options.topUpAmount, () => {});
    step(
      `2/4 balance ${usd(balanceBefore.available)} USDC < ${usd(options.minBalance)}: topped up ${usd(topped.credited)} USDC (tx ${topped.transaction}), balance ${usd(topped.balance)} USDC`,
    );
  } else {
    step(`2/4 balance ${usd(balanceBefore.available)} USDC: no top-up needed`);
  }

  const model = await pickModel(ctx, options.model);
  const key = await runKey(ctx, options.keyLimit);
  step(
    key.reused
      ? `3/4 using the saved API key ${key.prefix}… (${key.id})`
      : `3/4 created API key ${key.prefix}… (${key.id}) with a daily spend limit of ${usd(options.keyLimit)} USDC`,
  );
  if (maxCents !== undefined && key.max_price_cents !== null && maxCents > key.max_price_cents) {
    throw new CliError(
      `--max-cents ${maxCents} is above the saved key's cap of ${key.max_price_cents} cents/diem, which the API refuses: pass at most ` +
        `${key.max_price_cents}, or raise the cap with \`npm run agent -- keys edit ${key.id} --max-cents ${maxCents}\`.`,
      EXIT.usage,
      "max_price_above_key_cap",
      { key_max_price_cents: key.max_price_cents },
    );
  }

  const completion = await chat(ctx, {
    prompt: options.prompt,
    model,
    maxCents: options.maxCents,
    maxTokens: options.maxTokens,
    apiKey: key.key,
  });
  step(`4/4 ${completion.model} answered (${completion.usage.prompt_tokens} + ${completion.usage.completion_tokens} tokens)`);

  return { login: session, balance_before: balanceBefore, top_up: topped, key, completion };
}

/** The saved key while GET /v1/key accepts it; else (none, or revoked or expired) a new key with a daily spend limit. */
async function runKey(ctx: Context, limit: string): Promise<RunKey> {
  const saved = ctx.store.get(ctx.config.baseUrl)?.apiKey;
  if (saved) {
    try {
      const live = await currentKey(ctx, saved.key);
      return { id: live.id, name: live.name, prefix: live.prefix, key: saved.key, reused: true, max_price_cents: live.max_price_cents };
    } catch (error) {
      if (!(error instanceof CliError && error.exitCode === EXIT.auth)) throw error;
      ctx.store.forgetApiKey(ctx.config.baseUrl, saved.id);
    }
  }
  const created = await createKey(ctx, { name: "svc-agent run", spendLimit: limit, limitReset: "daily" });
  return {
    id: created.id,
    name: created.name,
    prefix: created.prefix,
    key: created.key,
    reused: false,
    max_price_cents: created.max_price_cents,
  };
}

/** "12.5" → 12_500_000n (integer arithmetic; amounts were validated). */
function toMicros(amount: string): bigint {
  const [whole, fraction = ""] = amount.replace(/^-/, "").split(".");
  const micros = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6));
  return amount.startsWith("-") ? -micros : micros;
}
