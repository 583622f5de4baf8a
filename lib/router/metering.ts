import "server-only";
import { AppError } from "@/lib/http/errors";
import type { ClaimedUsage, UpstreamAnswer } from "@/lib/router/upstream-answer";
import {
  countMaterialTokens,
  countReplyTokens,
  promptMaterial,
  tokenBounds,
  type CountableRequest,
  type PromptMaterial,
  type TokenBounds,
} from "@/lib/upstream/tokens";

/**
 * What a completion may be billed for: never more than our own count of what was sent and what came back.
 *
 * An upstream's usage claim is billed as claimed when it is within the tolerance of our count (its
 * tokenizer and chat template differ from ours: 25% plus 64 tokens, per side); a claim beyond it is a
 * dispute, recorded on the offer, and that side is billed at our count. Output is never billed beyond the
 * max_tokens we forwarded, and images at most IMAGE_TOKENS each. Without a claim our count is billed.
 */
export const USAGE_TOLERANCE_PERCENT = 25;
export const USAGE_TOLERANCE_TOKENS = 64;
/**
 * Prompt text beyond this many bytes per token of the model's context is refused before counting (real text
 * runs 3 to 6 bytes a token; only degenerate runs go beyond 16, and the tokenizer never exceeds 128).
 */
export const MAX_PROMPT_BYTES_PER_CONTEXT_TOKEN = 16;

/** The largest claim accepted as is against our count of `ours` tokens. */
export function allowedClaim(ours: number): number {
  return ours + Math.ceil((ours * USAGE_TOLERANCE_PERCENT) / 100) + USAGE_TOLERANCE_TOKENS;
}

/** The smallest count of ours that accepts `claim` (counting can stop there). */
export function minCountAccepting(claim: number): number {
  let n = Math.max(0, Math.floor(((claim - USAGE_TOLERANCE_TOKENS) * 100) / (100 + USAGE_TOLERANCE_PERCENT)));
  while (allowedClaim(n) < claim) n += 1;
  while (n > 0 && allowedClaim(n - 1) >= claim) n -= 1;
  return n;
}

/**
 * The prompt's size: byte bounds at once, the exact count on demand (once, in slices, off the hot path),
 * stopped early at the model's context (beyond it the answer is a refusal anyway) or when the request ends.
 */
export class PromptMeter {
  readonly bounds: TokenBounds;
  private readonly material: PromptMaterial;
  private counting?: Promise<number>;
  private cancelled = false;
  /** What the count checks between slices: a flag, not an AbortController (one per request cost ~8 µs to make). */
  private readonly stop = {
    throwIfAborted: () => {
      if (this.cancelled) throw new Error("prompt count cancelled: the request no longer needs it");
    },
  };

  constructor(
    request: CountableRequest,
    private readonly contextTokens: number,
  ) {
    this.material = promptMaterial(request);
    this.bounds = tokenBounds(this.material);
  }

  /** Our count, or a number ≥ the context length when the prompt does not fit. */
  count(): Promise<number> {
    this.counting ??= countMaterialTokens(this.material, { limit: this.contextTokens, signal: this.stop });
    return this.counting;
  }

  /**
   * Starts counting in the background once what the caller queues now (the forwarded request) is on the wire: a
   * count's first slice runs synchronously, and would otherwise delay the forward by up to a slice. The result is
   * awaited later, or never.
   */
  start(): void {
    setImmediate(() => {
      if (!this.cancelled) this.count().catch(() => undefined);
    });
  }

  /** Stops a count still running, at its next slice; one not started yet never starts. */
  cancel(): void {
    this.cancelled = true;
  }
}

export type PromptSizing = {
  /** What the reservation covers for the prompt: the most it could be billed. */
  reservedPromptTokens: number;
  maxOutputTokens: number;
  counted: boolean;
};

/**
 * How much to reserve, from the byte bounds alone. Cheap refusals come first (text far beyond the context, or
 * more tokens than the context even at the bounds' minimum). When the upper bound fits with the whole output,
 * the prompt is reserved at that bound (nothing counted before forwarding); null when only counting can tell.
 */
export function sizeByBounds(
  meter: PromptMeter,
  model: { id: string; contextTokens: number; maxOutputTokens: number },
  requestedOutput: number | null | undefined,
): PromptSizing | null {
  const context = model.contextTokens;
  const { lower, upper, textBytes } = meter.bounds;
  if (textBytes > context * MAX_PROMPT_BYTES_PER_CONTEXT_TOKEN) {
    throw new AppError(
      "context_length_exceeded",
      `The messages hold ${textBytes} bytes of text; ${model.id} accepts ${context} tokens, and more than ${MAX_PROMPT_BYTES_PER_CONTEXT_TOKEN} bytes of text per token of context is refused without counting.`,
      { details: { param: "messages", context_length: context } },
    );
  }
  if (lower >= context) throw contextExceeded(model, lower, "at least ");
  const output = outputCap(model, requestedOutput);
  return upper + output <= context ? { reservedPromptTokens: allowedClaim(upper), maxOutputTokens: output, counted: false } : null;
}

/** How much to reserve, from our count of the prompt (sliced; stops at the context length). */
export async function sizeByCount(
  meter: PromptMeter,
  model: { id: string; contextTokens: number; maxOutputTokens: number },
  requestedOutput: number | null | undefined,
): Promise<PromptSizing> {
  const context = model.contextTokens;
  const prompt = await meter.count();
  if (prompt >= context) throw contextExceeded(model, prompt, prompt === context ? "at least " : "");
  return { reservedPromptTokens: allowedClaim(prompt), maxOutputTokens: Math.min(outputCap(model, requestedOutput), context - prompt), counted: true };
}

function outputCap(model: { maxOutputTokens: number }, requestedOutput: number | null | undefined): number {
  return Math.min(requestedOutput ?? model.maxOutputTokens, model.maxOutputTokens);
}

function contextExceeded(model: { id: string; contextTokens: number }, tokens: number, qualifier: string) {
  return new AppError(
    "context_length_exceeded",
    `The messages are ${qualifier}${tokens} tokens; ${model.id} accepts at most ${model.contextTokens - 1} prompt tokens.`,
    { details: { param: "messages", prompt_tokens: tokens, context_length: model.contextTokens } },
  );
}

export type BilledUsage = {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | null;
  reasoningTokens: number | null;
  /** The upstream's claim, null when it sent none (then our count is billed). */
  claimed: ClaimedUsage | null;
  disputed: boolean;
};

/** Our count of the exchange against the upstream's claim: what the buyer pays for (see the top of this file). */
export async function billUsage(meter: PromptMeter, answer: UpstreamAnswer, maxOutputTokens: number): Promise<BilledUsage> {
  const claim = answer.usage;
  // Counting the reply stops where the answer is settled: at max_tokens, or where our count accepts the claim.
  const limit = claim ? Math.min(maxOutputTokens, minCountAccepting(claim.completionTokens)) : maxOutputTokens;
  const [oursPrompt, counted] = await Promise.all([meter.count(), countReplyTokens(answer.message, { limit })]);
  const oursCompletion = Math.min(counted, maxOutputTokens);
  if (!claim) {
    return { promptTokens: oursPrompt, completionTokens: oursCompletion, cachedTokens: null, reasoningTokens: null, claimed: null, disputed: false };
  }
  const promptOk = claim.promptTokens <= allowedClaim(oursPrompt);
  const completionOk = claim.completionTokens <= allowedClaim(oursCompletion);
  const promptTokens = promptOk ? claim.promptTokens : oursPrompt;
  const completionTokens = completionOk ? Math.min(claim.completionTokens, maxOutputTokens) : oursCompletion;
  return {
    promptTokens,
    completionTokens,
    cachedTokens: claim.cachedTokens === null ? null : Math.min(claim.cachedTokens, promptTokens),
    reasoningTokens: claim.reasoningTokens === null ? null : Math.min(claim.reasoningTokens, completionTokens),
    claimed: claim,
    disputed: !promptOk || !completionOk,
  };
}
