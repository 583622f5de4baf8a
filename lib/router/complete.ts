import "server-only";
import { assertApiKeyLive, forgetApiKey, type ApiKeyContext } from "@/lib/auth/api-key-auth";
import { getKeyLimitPeriod } from "@/lib/auth/current-key";
import { timeOrderedId } from "@/lib/auth/tokens";
import { getBalance } from "@/lib/ledger/accounts";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { getActiveModelOrThrow, getDepthByModel, refuseInactiveModel, type CatalogEntry } from "@/lib/market/book";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { currentRequestContext } from "@/lib/ops/request-context";
import { requiredFeatures, type Features } from "@/lib/supply/features";
import { serializeForwardedFields } from "@/lib/router/forwarded-fields";
import { releaseHoldOrRetry } from "@/lib/router/hold-release";
import { costFields } from "@/lib/router/cost-details";
import { prefixesParam, prefixHashes, promptPrefixes, sentPrefixTokens, type PromptPrefix } from "@/lib/router/prompt-prefixes";
import {
  clearCompletion,
  reserveWithKey,
  type CompletionEnd,
  type ClearResult,
  type KeyedReservation,
  type Upstream,
} from "@/lib/router/holds";
import {
  allowedClaim,
  billingRules,
  billUsage,
  PromptMeter,
  sizeByBounds,
  sizeByCount,
  type BilledUsage,
  type BillingRules,
  type PromptSizing,
} from "@/lib/upstream/metering";
import { noOfferError } from "@/lib/router/no-offer";
import {
  insufficientBalance,
  maxPriceAboveKeyCap,
  requestRejected,
  spendLimitExceeded,
  streamNotSupported,
  upstreamFailed,
} from "@/lib/router/refusals";
import { assertRequestSupplierIds, unknownProviderId } from "@/lib/market/provider-ids";
import { preferencesOrNull } from "@/lib/market/provider-schemas";
import type { ChatCompletionRequest, ChatCompletionResponse } from "@/lib/router/schemas";
import { parseUpstreamAnswer, type UpstreamAnswer } from "@/lib/upstream/answer";
import {
  answerBounds,
  classifyUpstreamError,
  classifyUpstreamStatus,
  type AnswerBounds,
  type ForwardFailure,
} from "@/lib/router/upstream-failure";
import { upstreamKey } from "@/lib/upstream/key-cache";
import { checkAnswer } from "@/lib/upstream/answer-checks";
import { recordAnswerChecks } from "@/lib/market/quality/answer-checks";
import { reportUpstreamFailure } from "@/lib/supply/offer-health";
import { DEFAULT_MAX_RESPONSE_BYTES, postChatCompletion, UpstreamError } from "@/lib/upstream/client";

/** Upstream answers that our validated request provoked: they never count against the supplier. */
export const REQUEST_REJECTED_STATUSES = new Set([400, 413, 422]);

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
 * One chat completion: reserve the worst case on the cheapest eligible offer that serves the request's
 * features, forward exactly once, bill the usage checked against our own count, clear it in one transaction.
 * A failure that is the supplier's (5xx, timeout, unusable answer, refused key) counts against the offer's
 * health, weighed across buyers; a 4xx our validated request provoked, or an answer too large or too slow that
 * the request itself asked for, does not (lib/router/upstream-failure.ts). Either way nothing is charged.
 */
export async function completeChat(input: CompletionInput): Promise<ChatCompletionResult> {
  if (input.body.stream) throw streamNotSupported();
  const reserved = await reserveCompletion(input);
  const { body, model, meter, sizing, reservation, clock } = reserved;
  try {
    const { holdId, offerId, priceCents, maxPriceCents } = reservation;
    const upstream = await forwardOnce({
      holdId,
      offerId,
      accountId: reservation.accountId,
      upstream: reservation.upstream,
      forwarded: reserved.forwarded,
      bounds: answerBounds(body, sizing),
      now: clock,
    });

    const completionId = newCompletionId();
    const { usage, clear } = await billAndClear({
      reserved,
      completionId,
      answer: upstream.answer,
      latencyMs: upstream.latencyMs,
    });
    return {
      completion: responseBody({
        completionId,
        created: Math.floor(reserved.now.getTime() / 1000),
        model: model.id,
        answer: upstream.answer,
        excludeReasoning: body.reasoning?.exclude === true,
        usage,
        clear,
      }),
      cost: {
        balanceMicros: clear.balanceMicros,
        chargeMicros: clear.chargeMicros,
        burnMicroDiem: clear.burnMicroDiem,
        priceCents,
        maxPriceCents,
      },
    };
  } finally {
    meter.cancel();
  }
}

export type CompletionInput = {
  body: ChatCompletionRequest;
  /** The max price the request itself asks for (X-Svc-Max-Cents), if any. */
  requestedMaxPriceCents: number | null;
  apiKey: ApiKeyContext;
  /** Which API the buyer called: its answer's id is chatcmpl-… (chat, the default) or resp_… (responses). */
  surface?: "chat" | "responses";
  now?: () => Date;
};

/** A completion reserved and ready to forward: what the forward, the bill and the clear read. */
export type ReservedCompletion = {
  body: ChatCompletionRequest;
  model: CatalogEntry;
  /** The buyer's fields as the upstream gets them (serializeForwardedFields), the envelope not yet added. */
  forwarded: string;
  meter: PromptMeter;
  rules: BillingRules;
  sizing: PromptSizing;
  reservation: ReservedOk;
  /** Which API the buyer called (CompletionInput.surface). */
  surface: "chat" | "responses";
  /** The prompt's prefix chain (lib/router/prompt-prefixes.ts); null when it is shorter than one block. */
  prefixes: PromptPrefix[] | null;
  /** performance.now() at the request's arrival. */
  startedAt: number;
  /** When it was reserved. */
  now: Date;
  clock: () => Date;
};

/** A completion's id: 9 time characters, then 18 random bytes (25 base62 characters). */
export function newCompletionId(): string {
  return `chatcmpl-${timeOrderedId(18)}`;
}

/**
 * Everything before the forward, for a completion and a stream alike: the model, the features it routes by, the
 * prompt's meter and billing rules, and the reservation on the cheapest eligible offer (see reserve). Whatever is
 * refused here is refused before anything was held. The caller owns the meter from then on (cancel it when done).
 */
export async function reserveCompletion(input: CompletionInput): Promise<ReservedCompletion> {
  const clock = input.now ?? (() => new Date());
  // The request's total latency counts from its arrival (the front door's context), else from here.
  const startedAt = currentRequestContext()?.startedAt ?? performance.now();
  const { body, apiKey } = input;
  const model = await getActiveModelOrThrow(body.model);
  const features = requiredFeatures(body);
  const forwarded = serializeForwardedFields(body);
  const meter = new PromptMeter(body, model.contextTokens);
  const rules = billingRules(body, model);
  const prefixes =
    model.cacheReadMicroDiemPerMTok === null
      ? null
      : promptPrefixes({ accountId: apiKey.accountId, modelId: model.id }, body, meter.bounds.textBytes);
  const now = clock();
  try {
    const { sizing, reservation } = await reserve({
      meter,
      prefixes,
      body,
      rules,
      model,
      apiKey,
      requestedMaxPriceCents: input.requestedMaxPriceCents,
      features,
      now,
    });
    meter.start();
    return {
      body,
      model,
      forwarded,
      meter,
      rules,
      sizing,
      reservation,
      prefixes,
      surface: input.surface ?? "chat",
      startedAt,
      now,
      clock,
    };
  } catch (error) {
    meter.cancel();
    throw error;
  }
}

/**
 * Bills the usage checked against our count and clears it; any failure releases the hold (nothing charged). A claim
 * outside what the request allows, or a reasoning claim beyond what the answer makes plausible, is billed at our count
 * (at the bound) and, once cleared, counts against the offer's health. A stream's answer comes here as its ending
 * made it (lib/upstream/metering.ts streamedAnswerToBill): without the upstream's claim when it did not complete.
 */
export async function billAndClear(input: {
  reserved: ReservedCompletion;
  completionId: string;
  answer: UpstreamAnswer;
  /** The upstream's time to answer (to its last byte, for a stream). */
  latencyMs: number;
  /** The answer is whole (a stream cut short is not): its tool calls and schema are checked once it is served. */
  whole?: boolean;
  /** How it ended (a JSON answer always completes) and whether it was streamed: the generation record's end, streamed. */
  endReason?: CompletionEnd;
  streamed?: boolean;
}) {
  const { reserved, answer } = input;
  const { holdId, offerId, accountId } = reserved.reservation;
  const maxOutputTokens = reserved.sizing.maxOutputTokens;
  let billed: { usage: BilledUsage; clear: ClearResult };
  try {
    const { reservation, prefixes } = reserved;
    const [usage, sentCachedTokens] = await Promise.all([
      billUsage(reserved.meter, answer, maxOutputTokens, reserved.rules),
      // svc's figure of the cached tokens: its count of the prefix it sent this offer within its retention.
      reservation.cachesPrompts && reservation.sentPrefix !== null && prefixes !== null
        ? sentPrefixTokens(reserved.body, prefixes[reservation.sentPrefix - 1].messages)
        : null,
    ]);
    const clear = await clearCompletion({
      holdId,
      completionId: input.completionId,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      usageEstimated: usage.claimed === null,
      claimed: usage.claimed,
      reasoningTokens: usage.reasoningTokens,
      usageDisputed: usage.disputed,
      latencyMs: input.latencyMs,
      totalLatencyMs: performance.now() - reserved.startedAt,
      finishReason: answer.finishReason,
      endReason: input.endReason ?? "completed",
      streamed: input.streamed ?? false,
      responsesApi: reserved.surface === "responses",
      counted: usage.counted,
      claimedCachedTokens: answer.usage?.cachedTokens ?? null,
      sentCachedTokens,
      prefixHashes: reservation.cachesPrompts ? prefixHashes(prefixes) : null,
    });
    billed = { usage, clear };
  } catch (error) {
    await releaseHoldOrRetry(holdId);
    throw error;
  }
  // The offer's success (health) was recorded by the clear's own statement; a failure after it is its last word.
  const { outOfBounds, disputed } = billed.usage;
  if (disputed)
    log.info("usage disputed", {
      offerId,
      completionId: input.completionId,
      claimed: billed.usage.claimed,
      billed: [billed.usage.promptTokens, billed.usage.completionTokens, billed.usage.reasoningTokens],
    });
  // After the answer is served (the next turn of the event loop), off its path: the offer's answer checks.
  // Only a request that constrained its answer (tools, a json_schema format) has anything to check: the rest of the
  // hot path schedules nothing.
  const { body } = reserved;
  if (input.whole !== false && ((body.tools?.length ?? 0) > 0 || body.response_format?.type === "json_schema")) {
    setImmediate(() => void recordAnswerChecks(offerId, checkAnswer(body, answer)));
  }
  // Weighed like a failed answer, across buyers (lib/supply/offer-health.ts): the reference upstream, like a provider
  // that counts hidden reasoning into completion_tokens, can exceed max_tokens honestly, and one buyer's requests
  // must not take an offer off the book.
  if (outOfBounds) {
    await reportUpstreamFailure(offerId, outOfBounds, { accountId, cause: "answer" }).catch((error: unknown) =>
      log.warn("health report failed", { error }),
    );
  }
  return billed;
}

export type ReservedOk = Extract<KeyedReservation, { status: "ok" }>;

/**
 * Reserves on the cheapest eligible offer, in one statement that also authenticates the key (from its row, not
 * from any cache), resolves the max price and reads the model's prices. The prompt is reserved at its byte bound
 * when that decides (nothing counted before forwarding); otherwise, or when that reservation fails, it is counted
 * and reserved exactly, unless even the least the request can cost exceeds the buyer's balance (then 402 at
 * once: an unfunded key costs us no counting).
 */
async function reserve(input: {
  meter: PromptMeter;
  prefixes: PromptPrefix[] | null;
  body: ChatCompletionRequest;
  rules: BillingRules;
  model: CatalogEntry;
  apiKey: ApiKeyContext;
  requestedMaxPriceCents: number | null;
  features: Features;
  now: Date;
}): Promise<{ sizing: PromptSizing; reservation: ReservedOk }> {
  const { meter, body, rules, model, apiKey, features, now } = input;
  const provider = preferencesOrNull(body.provider);
  await assertRequestSupplierIds(provider);
  const attempt = (sizing: PromptSizing) =>
    reserveWithKey({
      keyHash: apiKey.keyHash,
      modelId: model.id,
      requestedMaxPriceCents: input.requestedMaxPriceCents,
      promptTokens: sizing.reservedPromptTokens,
      outputTokens: sizing.maxOutputTokens,
      features,
      provider,
      prefixes: prefixesParam(input.prefixes),
    });

  // The least this request can cost: its smallest possible prompt and one output token at the cheapest price on the book.
  const floorMicros = async () => {
    const best = (await getDepthByModel()).get(model.id)?.bestPriceCents ?? 1;
    return chargeMicros(burnMicroDiem(allowedClaim(meter.bounds.lower), 1, model), best);
  };
  const countOrRefuse = async () => {
    const floor = await floorMicros();
    const available = await availableBalance(apiKey.accountId);
    if (floor > available) {
      // Refused before any reservation statement has checked the key (it may come from the cache).
      await assertApiKeyLive(apiKey.keyHash);
      throw insufficientBalance({ amountMicros: floor, priceCents: null }, available);
    }
    return sizeByCount(meter, model, rules);
  };

  let sizing = sizeByBounds(meter, model, rules) ?? (await countOrRefuse());
  let reservation = await attempt(sizing);
  if (reservation.status !== "ok" && !sizing.counted && isRetryable(reservation)) {
    sizing = await countOrRefuse();
    reservation = await attempt(sizing);
  }
  switch (reservation.status) {
    case "ok":
      return { sizing, reservation };
    case "invalid_api_key":
      forgetApiKey(apiKey.keyHash);
      throw new AppError("invalid_api_key", "This API key is unknown, revoked or expired.");
    case "model_not_found":
      // Retired (or removed) since the cached catalog was read: the statement reads models.active itself.
      return refuseInactiveModel(model.id);
    case "max_price_above_key_cap":
      throw maxPriceAboveKeyCap(input.requestedMaxPriceCents, reservation.keyMaxPriceCents);
    case "invalid_provider_id":
      throw unknownProviderId(reservation.param, reservation.id);
    case "no_offer":
      throw await noOfferError({
        modelId: model.id,
        maxPriceCents: reservation.maxPriceCents,
        burnMicroDiem: reservation.burnMicroDiem,
        promptTokens: sizing.reservedPromptTokens,
        outputTokens: sizing.maxOutputTokens,
        features,
        preferences: reservation.preferences,
        keyMaxPriceCents: reservation.keyMaxPriceCents,
        now,
      });
    case "insufficient_balance":
      throw insufficientBalance(reservation, await availableBalance(reservation.accountId));
    case "spend_limit_exceeded":
      throw spendLimitExceeded(reservation.spendLimitMicros, reservation.amountMicros, await getKeyLimitPeriod(reservation.apiKeyId, now));
  }
}

/** Failures a smaller (exactly counted) reservation may avoid. */
function isRetryable(r: KeyedReservation): boolean {
  return r.status === "no_offer" || r.status === "insufficient_balance" || r.status === "spend_limit_exceeded";
}

type Forwarded = { answer: UpstreamAnswer; latencyMs: number };

/**
 * Sends the request to the reserved offer's upstream exactly once; any failure releases the hold and throws. A
 * failure is reported against the offer with the buyer and its cause, unless the request explains it.
 */
async function forwardOnce(input: {
  holdId: string;
  offerId: string;
  accountId: string;
  upstream: Upstream;
  forwarded: string;
  bounds: AnswerBounds;
  now: () => Date;
}): Promise<Forwarded> {
  const envelope = `{"model":${JSON.stringify(input.upstream.model)},"max_tokens":${input.bounds.maxOutputTokens},"stream":false,`;
  const limits = { maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES, timeoutMs: env.UPSTREAM_TIMEOUT_MS };
  const started = input.now().getTime();
  let failure: ForwardFailure;
  try {
    const res = await postChatCompletion({
      baseUrl: input.upstream.baseUrl,
      apiKey: upstreamKey(input.upstream.keyCiphertext),
      body: envelope + input.forwarded.slice(1),
      ...limits,
    });
    const latencyMs = input.now().getTime() - started;
    const answer = res.status === 200 ? parseUpstreamAnswer(res.json) : null;
    if (answer) return { answer, latencyMs };
    if (REQUEST_REJECTED_STATUSES.has(res.status)) throw requestRejected(res.status, res.json);
    failure = classifyUpstreamStatus(res.status, res.json);
  } catch (error) {
    if (!(error instanceof UpstreamError)) {
      await releaseHoldOrRetry(input.holdId);
      throw error;
    }
    failure = classifyUpstreamError(error, input.bounds, limits);
  }

  await releaseHoldOrRetry(input.holdId);
  throw upstreamFailed(failure, await reportForwardFailure(input.offerId, input.accountId, failure, input.now()));
}

/**
 * Counts a failed forward against the offer's health when it is the supplier's (upstream-failure.ts says whose it
 * is), with the buyer it failed; true when it counted.
 */
export async function reportForwardFailure(
  offerId: string,
  accountId: string,
  failure: ForwardFailure,
  now: Date,
  /** false when the forward was answered in part and billed (a broken stream): its clear measured it already. */
  forward = true,
): Promise<boolean> {
  const { cause } = failure;
  if (cause !== "upstream" && cause !== "answer") {
    log.info("upstream failure not counted against the offer", { offerId, reason: failure.reason, cause });
    return false;
  }
  await reportUpstreamFailure(offerId, failure.reason, { accountId, cause, forward, now }).catch((error: unknown) =>
    log.warn("health report failed", { error }),
  );
  return true;
}

export function responseBody(input: {
  completionId: string;
  created: number;
  model: string;
  answer: UpstreamAnswer;
  /** reasoning.exclude: the answer leaves the visible reasoning out (it was billed all the same). */
  excludeReasoning: boolean;
  usage: BilledUsage;
  clear: ClearResult;
}): ChatCompletionResponse {
  const { answer, usage, clear } = input;
  // On a caching offer, the cached tokens billed (svc_cached_prompt_tokens); elsewhere the upstream's claim, as reported.
  const cachedTokens = clear.cachedTokens ?? usage.cachedTokens;
  const message = input.excludeReasoning ? withoutReasoning(answer.message) : answer.message;
  return {
    id: input.completionId,
    object: "chat.completion",
    created: input.created,
    model: input.model,
    choices: [{ index: 0, message, finish_reason: answer.finishReason, logprobs: answer.logprobs }],
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
      ...(cachedTokens !== null && { prompt_tokens_details: { cached_tokens: cachedTokens } }),
      ...(usage.reasoningTokens !== null && { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
      ...costFields(clear, {
        billedPromptTokens: usage.promptTokens,
        billedCompletionTokens: usage.completionTokens,
        claimedPromptTokens: usage.claimed?.promptTokens ?? null,
        claimedCompletionTokens: usage.claimed?.completionTokens ?? null,
        billedReasoningTokens: usage.reasoningTokens,
        claimedReasoningTokens: usage.claimed?.reasoningTokens ?? null,
        usageEstimated: usage.claimed === null,
        usageDisputed: usage.disputed,
        counted: usage.counted,
        billedCachedTokens: clear.cachedTokens,
        claimedCachedTokens: usage.claimed?.cachedTokens ?? null,
      }),
    },
    ...(answer.systemFingerprint !== null && { system_fingerprint: answer.systemFingerprint }),
  };
}

function withoutReasoning(message: UpstreamAnswer["message"]): UpstreamAnswer["message"] {
  const { reasoning_content: _hidden, ...rest } = message;
  return rest;
}

async function availableBalance(accountId: string): Promise<bigint> {
  return (await getBalance("buyer", accountId)).availableMicros;
}
