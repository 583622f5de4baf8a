/** run: the spec's headless agent flow in one go: login → top up if the balance is low → create a key → one chat. */
import type { Context } from "./api";
import { chat, pickModel, type ChatResult } from "./chat";
import { CliError, EXIT } from "./errors";
import { createKey, getBalance, type Balance } from "./keys";
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
};

export type RunResult = {
  login: LoginResult;
  balance_before: Balance;
  top_up: TopUpResult | null;
  key: { id: string; name: string; prefix: string; key: string };
  completion: ChatResult;
};

export async function runFlow(ctx: Context, options: RunOptions, step: (text: string) => void): Promise<RunResult> {
  const minBalance = toMicros(assertUsdAmount(options.minBalance, "--min-balance"));
  assertUsdAmount(options.topUpAmount, "--topup-amount");
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
  const key = await createKey(ctx, { name: `svc-agent run ${new Date().toISOString()}` });
  step(`3/4 created API key ${key.prefix}… (${key.id})`);

  const completion = await chat(ctx, {
    prompt: options.prompt,
    model,
    maxCents: options.maxCents,
    maxTokens: options.maxTokens,
    apiKey: key.key,
  });
  step(`4/4 ${completion.model} answered (${completion.usage.prompt_tokens} + ${completion.usage.completion_tokens} tokens)`);

  return {
    login: session,
    balance_before: balanceBefore,
    top_up: topped,
    key: { id: key.id, name: key.name, prefix: key.prefix, key: key.key },
    completion,
  };
}

/** "12.5" → 12_500_000n (integer arithmetic; amounts were validated). */
function toMicros(amount: string): bigint {
  const [whole, fraction = ""] = amount.replace(/^-/, "").split(".");
  const micros = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6));
  return amount.startsWith("-") ? -micros : micros;
}
