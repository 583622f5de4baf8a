import "server-only";
import type { ApiKeyContext } from "@/lib/auth/api-key-auth";
import { randomBase62 } from "@/lib/auth/tokens";
import { getBalance } from "@/lib/ledger/accounts";
import { env } from "@/lib/env";
import { AppError } from "@/lib/http/errors";
import { log } from "@/lib/log";
import { getActiveModelOrThrow, type CatalogEntry } from "@/lib/market/book";
import { burnMicroDiem, formatMicros } from "@/lib/money";
import { clearCompletion, releaseHold, reserveCompletion, type Upstream } from "@/lib/router/holds";
import { resolveMaxPriceCents } from "@/lib/router/max-price";
import { noOfferError } from "@/lib/router/no-offer";
import { PASSTHROUGH_FIELDS, type ChatCompletionRequest } from "@/lib/router/request";
import type { ChatCompletionResponse } from "@/lib/router/response";
import { decryptCredential } from "@/lib/upstream/key-encryption";
import { reportUpstreamFailure, reportUpstreamSuccess } from "@/lib/supply/offer-health";
import { postChatCompletion, UpstreamError } from "@/lib/upstream/client";
import { countChatPromptTokens, countTextTokens } from "@/lib/upstream/tokens";

/** Upstream tokenizers differ from ours: reserve the prompt with a margin so the worst case really is one. */
const PROMPT_RESERVE_FACTOR = 1.1;
const PROMPT_RESERVE_EXTRA_TOKENS = 16;
/** A hold outlives the upstream deadline by this much before the sweeper may release it. */
const HOLD_GRACE_MS = 60_000;

/** What a completion cost and under which price, for the caller to report (the route turns it into headers). */
export type CompletionCost = {
  /** The buyer's confirmed balance after the clear. */
  balanceMicros: bigint;
  chargeMicros: bigint;
  burnMicroDiem: bigint;
  /** The price of the offer that served it, and the max price it was routed under (cents per diem). */
  priceCents: number;
  maxPriceCents: number;
};

export type ChatCompletionResult = { completion: ChatCompletionResponse; cost: CompletionCost };

/**
 * One chat completion: reserve the worst case on the cheapest eligible offer, forward exactly once, meter
 * the burn from the upstream's usage and clear it in one transaction. Any upstream failure releases the
 * reservation (nothing charged) and counts against the offer's health.
 */
export async function completeChat(input: {
  body: ChatCompletionRequest;
  /** The max price the request itself asks for (X-Svc-Max-Cents), if any. */
  requestedMaxPriceCents: number | null;
  apiKey: ApiKeyContext;
  now?: () => Date;
}): Promise<ChatCompletionResult> {
  const clock = input.now ?? (() => new Date());
  const { body, apiKey } = input;
  if (body.stream) {
    throw new AppError("stream_not_supported", "stream: true is not supported in v1; send stream: false or omit it.", {
      details: { param: "stream" },
    });
  }
  const model = await getActiveModelOrThrow(body.model);
  const maxPriceCents = resolveMaxPriceCents(input.requestedMaxPriceCents, apiKey);
  const { promptTokens, maxOutputTokens } = sizeRequest(body, model);
  const reservedPrompt = Math.ceil(promptTokens * PROMPT_RESERVE_FACTOR) + PROMPT_RESERVE_EXTRA_TOKENS;
  const worstBurn = burnMicroDiem(reservedPrompt, maxOutputTokens, model);

  const now = clock();
  const reservation = await reserveCompletion({
    accountId: apiKey.accountId,
    apiKeyId: apiKey.apiKeyId,
    modelId: model.id,
    maxPriceCents,
    burnMicroDiem: worstBurn,
    now,
    expiresAt: new Date(now.getTime() + env.UPSTREAM_TIMEOUT_MS + HOLD_GRACE_MS),
  });
  if (reservation.status === "no_offer") {
    throw await noOfferError({ modelId: model.id, maxPriceCents, burnMicroDiem: worstBurn, now });
  }
  if (reservation.status !== "ok") {
    throw reservation.status === "insufficient_balance"
      ? await insufficientBalance(apiKey.accountId, reservation)
      : spendLimitExceeded(apiKey, reservation.amountMicros);
  }

  const { holdId, offerId, priceCents } = reservation;
  const upstream = await forwardOnce({ holdId, offerId, upstream: reservation.upstream, body, maxOutputTokens, now: clock });

  const usage = upstream.usage ?? {
    promptTokens,
    completionTokens: upstream.choices.reduce((n, c) => n + countTextTokens(c.message.content), 0),
  };
  const completionId = `chatcmpl-${randomBase62(24)}`;
  const clear = await clearCompletion({
    holdId,
    completionId,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    usageEstimated: upstream.usage === null,
    latencyMs: upstream.latencyMs,
    burnMicroDiem: burnMicroDiem(usage.promptTokens, usage.completionTokens, model),
    now: clock(),
  }).catch(async (error: unknown) => {
    await releaseHold(holdId);
    throw error;
  });
  void reportUpstreamSuccess(offerId).catch((error: unknown) => log.warn("health report failed", { offerId, error }));

  return {
    completion: {
      id: completionId,
      object: "chat.completion",
      created: Math.floor(now.getTime() / 1000),
      model: model.id,
      choices: upstream.choices,
      usage: {
        prompt_tokens: usage.promptTokens,
        completion_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
      },
    },
    cost: {
      balanceMicros: clear.balanceMicros,
      chargeMicros: clear.chargeMicros,
      burnMicroDiem: clear.burnMicroDiem,
      priceCents,
      maxPriceCents,
    },
  };
}

function sizeRequest(body: ChatCompletionRequest, model: CatalogEntry) {
  const promptTokens = countChatPromptTokens(body.messages);
  if (promptTokens >= model.contextTokens) {
    throw new AppError(
      "context_length_exceeded",
      `The messages are ${promptTokens} tokens; ${model.id} accepts at most ${model.contextTokens - 1} prompt tokens.`,
      { details: { param: "messages", prompt_tokens: promptTokens, context_length: model.contextTokens } },
    );
  }
  const requested = body.max_completion_tokens ?? body.max_tokens ?? model.maxOutputTokens;
  const maxOutputTokens = Math.min(requested, model.maxOutputTokens, model.contextTokens - promptTokens);
  return { promptTokens, maxOutputTokens };
}

type UpstreamAnswer = {
  choices: ChatCompletionResponse["choices"];
  usage: { promptTokens: number; completionTokens: number } | null;
  latencyMs: number;
};

/** Sends the request to the reserved offer's upstream exactly once; any failure releases the hold and throws 502. */
async function forwardOnce(input: {
  holdId: string;
  offerId: string;
  upstream: Upstream;
  body: ChatCompletionRequest;
  maxOutputTokens: number;
  now: () => Date;
}): Promise<UpstreamAnswer> {
  const upstreamBody: Record<string, unknown> = {
    model: input.upstream.model,
    messages: input.body.messages,
    max_tokens: input.maxOutputTokens,
    stream: false,
  };
  for (const field of PASSTHROUGH_FIELDS) if (input.body[field] !== undefined) upstreamBody[field] = input.body[field];

  const started = input.now().getTime();
  let failure: string;
  try {
    const res = await postChatCompletion({
      baseUrl: input.upstream.baseUrl,
      apiKey: decryptCredential(input.upstream.keyCiphertext),
      body: upstreamBody,
      timeoutMs: env.UPSTREAM_TIMEOUT_MS,
    });
    const latencyMs = input.now().getTime() - started;
    if (res.status === 200) {
      const parsed = parseUpstreamAnswer(res.json);
      if (parsed) return { ...parsed, latencyMs };
      failure = "unusable answer (not an OpenAI chat completion)";
    } else {
      failure = `HTTP ${res.status}`;
    }
  } catch (error) {
    if (!(error instanceof UpstreamError)) {
      await releaseHold(input.holdId);
      throw error;
    }
    failure = error.kind === "timeout" ? "timeout" : error.message;
  }

  await releaseHold(input.holdId);
  await reportUpstreamFailure(input.offerId, failure).catch((error: unknown) => log.warn("health report failed", { error }));
  throw new AppError(
    "upstream_error",
    `The supplier's upstream failed (${failure}); nothing was charged and the request was not retried. Retrying may route to another offer.`,
    { details: { upstream_failure: failure } },
  );
}

function parseUpstreamAnswer(json: unknown): Omit<UpstreamAnswer, "latencyMs"> | null {
  if (!json || typeof json !== "object") return null;
  const { choices, usage } = json as { choices?: unknown; usage?: unknown };
  if (!Array.isArray(choices) || choices.length === 0) return null;
  const parsed: ChatCompletionResponse["choices"] = [];
  for (const [i, choice] of choices.entries()) {
    const message = (choice as { message?: { role?: unknown; content?: unknown } })?.message;
    if (!message || typeof message.content !== "string") return null;
    const finish = (choice as { finish_reason?: unknown }).finish_reason;
    parsed.push({
      index: i,
      message: { role: typeof message.role === "string" ? message.role : "assistant", content: message.content },
      finish_reason: typeof finish === "string" ? finish : "stop",
    });
  }
  const u = usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  const validUsage =
    u && Number.isSafeInteger(u.prompt_tokens) && Number.isSafeInteger(u.completion_tokens) &&
    (u.prompt_tokens as number) >= 0 && (u.completion_tokens as number) >= 0;
  return {
    choices: parsed,
    usage: validUsage ? { promptTokens: u.prompt_tokens as number, completionTokens: u.completion_tokens as number } : null,
  };
}

async function insufficientBalance(accountId: string, r: { amountMicros: bigint; priceCents: number }) {
  const available = (await getBalance("buyer", accountId)).availableMicros;
  return new AppError(
    "insufficient_balance",
    `This request can cost up to ${formatMicros(r.amountMicros)} USDC at ${r.priceCents} cents per diem, but your available balance is ${formatMicros(available)} USDC. Top up with POST /v1/x402/top-up, or lower max_tokens.`,
    { details: { needed: formatMicros(r.amountMicros), available: formatMicros(available), price_cents: r.priceCents } },
  );
}

function spendLimitExceeded(apiKey: ApiKeyContext, amountMicros: bigint) {
  return new AppError(
    "spend_limit_exceeded",
    `This API key's spend limit (${formatMicros(apiKey.spendLimitMicros ?? 0n)} USDC) cannot cover this request's worst case of ${formatMicros(amountMicros)} USDC. Raise the limit or use another key.`,
    { details: { limit: "key_spend_limit", spend_limit: formatMicros(apiKey.spendLimitMicros ?? 0n), needed: formatMicros(amountMicros) } },
  );
}
