import "server-only";
import { AppError } from "@/lib/errors";
import type { CompletionEnd } from "@/lib/wire";
import { log } from "@/lib/log";
import type { AssistantMessageOut, ClaimedUsage, UpstreamAnswer } from "@/lib/upstream/answer";
import {
  countMaterialTokens,
  countReplyTokens,
  promptMaterial,
  tokenBounds,
  type CountableReply,
  type CountableRequest,
  type PromptMaterial,
  type TokenBounds,
} from "@/lib/upstream/tokens";

/**
 * What a completion may be billed for: never more than our own count of what was sent and what came back, and
 * never more than the request allows.
 *
 * The tolerance. An upstream's usage claim is billed as claimed when each side is within the tolerance of our
 * count (its tokenizer and chat template differ from ours): ours + max(25% of ours, min(ours, 16)) tokens, i.e. up
 * to twice our count below 16 tokens, 16 more up to 64, 25% more beyond. It is proportional: nothing over a count of
 * 0 (an empty reply is billed no completion tokens whatever is claimed), never more than twice ours. A claim beyond
 * it is a dispute, recorded on the offer, and that side is billed at our count.
 *
 * What we count as the reply: its content, refusal, visible reasoning and tool calls, but tool calls only when the
 * request sent tools (an answer calling tools nobody offered is not billed for them). An empty answer (no content,
 * refusal, reasoning text or billable tool calls) bills no completion tokens at all.
 *
 * Hidden reasoning. When the model bills reasoning (models.bills_reasoning) and the buyer asked for it
 * (reasoning_effort, or OpenRouter's `reasoning` object: its effort, max_tokens or enabled; anything but "none" or
 * enabled: false), the claimed reasoning tokens are billed up to their bound, and the rest of the completion claim
 * is checked against our count of the reply. The bound is the lesser of
 * - the reasoning budget: reasoning.max_tokens, else max_completion_tokens (OpenAI's: it covers the visible answer
 *   and the reasoning), else DEFAULT_REASONING_BUDGET_TOKENS scaled by the effort (minimal ¼, low ½, medium 1,
 *   high 2: 256 to 2,048 tokens), never more than the output forwarded; and
 * - what the answer makes plausible: the effort's default budget, or REASONING_TOKENS_PER_ANSWER_TOKEN tokens per
 *   token of our count of the reply (its visible reasoning included), whichever is more.
 * A reasoning claim beyond its bound is a dispute billed at the bound, and it counts against the offer's health like
 * a claim outside the request's bounds (below), weighed across buyers. The upstream is told the effort
 * (reasoning_effort) and the whole output (max_tokens), not the budget (OpenAI-compatible servers take none), so one
 * that honestly reasons past it is billed at the bound like one that pads: the budget is the buyer's price cap. The
 * output forwarded as max_tokens (and reserved) is the visible cap (max_tokens, else the model's) plus the budget,
 * within the model's cap and the context; max_completion_tokens, when sent, is the whole. Asking for reasoning never
 * reserves more than that. Otherwise (a model that does not bill reasoning, or a buyer who did not ask) hidden
 * reasoning is part of the completion claim, checked against our count.
 *
 * Why these numbers. The default budget is what a buyer who did not bound reasoning pays for it at most: 1,024
 * tokens at medium is Anthropic's smallest thinking budget, enough for what reasoning models spend on an everyday
 * question, and far below their output caps (32k to 100k; 8,192 for the reference qwen3-235b). A buyer who wants
 * longer reasoning says so (reasoning.max_tokens or max_completion_tokens) and pays for it. 32 reasoning tokens per
 * answer token: honest reasoning runs from under once the answer (long code) to a few tens of times it (a worked
 * answer to a hard question); a claim beyond both that and the effort's default budget is not what any effort makes
 * of that answer (the case found: 8,135 reasoning tokens claimed for a 57-token answer).
 *
 * The bounds. A claim outside what the request allows (prompt beyond the tolerance of its byte bound plus
 * PROMPT_TEMPLATE_TOKENS for the upstream's own template and system prompt; completion beyond the max_tokens
 * forwarded) is impossible for an honest upstream: it is a dispute billed at our count, and it counts against the
 * offer's health like a failed answer. Whatever its size it never reaches SQL as more than the claim columns hold.
 * Output is never billed beyond the max_tokens we forwarded, and images at most IMAGE_TOKENS each. Without a claim
 * our count is billed (and no hidden reasoning).
 */
export const USAGE_TOLERANCE_PERCENT = 25;
/** Below 64 tokens the tolerance is min(ours, this): a short count may be claimed up to twice, never more. */
export const USAGE_TOLERANCE_FLOOR_TOKENS = 16;
/** What an upstream's own chat template and system prompt may add to a prompt's byte bound before a claim is impossible. */
export const PROMPT_TEMPLATE_TOKENS = 1024;
/**
 * Prompt text beyond this many bytes per token of the model's context is refused before counting (real text
 * runs 3 to 6 bytes a token; only degenerate runs go beyond 16, and the tokenizer never exceeds 128).
 */
export const MAX_PROMPT_BYTES_PER_CONTEXT_TOKEN = 16;

/** The reasoning budget of a request that bounds none, at effort "medium" (see the top of this file for why). */
export const DEFAULT_REASONING_BUDGET_TOKENS = 1024;
/** Hidden reasoning is plausible up to this many tokens per token of our count of the reply, or the effort's default budget. */
export const REASONING_TOKENS_PER_ANSWER_TOKEN = 32;

export const REASONING_EFFORTS = ["minimal", "low", "medium", "high"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
/** The default budget per effort, in quarters of DEFAULT_REASONING_BUDGET_TOKENS. */
const EFFORT_QUARTERS: Record<ReasoningEffort, number> = { minimal: 1, low: 2, medium: 4, high: 8 };

/** The reasoning budget of a request at this effort that names none. */
export function defaultReasoningBudget(effort: ReasoningEffort): number {
  return (DEFAULT_REASONING_BUDGET_TOKENS * EFFORT_QUARTERS[effort]) / 4;
}

/** What a request says of reasoning and of its output: OpenAI's fields and OpenRouter's `reasoning` object. */
export type ReasoningRequest = {
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  reasoning_effort?: string | null;
  reasoning?: { effort?: string | null; max_tokens?: number | null; enabled?: boolean | null } | null;
};

/**
 * The effort a request asks for: reasoning_effort, else reasoning.effort, else "none" for reasoning.enabled: false,
 * else "medium" when reasoning.max_tokens or reasoning.enabled: true asks for reasoning (OpenRouter's default); null
 * when it says nothing. The schema refuses a request whose fields disagree.
 */
export function reasoningEffortOf(request: ReasoningRequest): ReasoningEffort | "none" | null {
  const effort = request.reasoning_effort ?? request.reasoning?.effort ?? null;
  if (effort !== null) return effort as ReasoningEffort | "none";
  const r = request.reasoning;
  if (r?.enabled === false) return "none";
  return r?.max_tokens != null || r?.enabled === true ? "medium" : null;
}

/** The most hidden reasoning an answer of `answerTokens` (our count of the reply) makes plausible under these rules. */
export function plausibleReasoning(answerTokens: number, reasoning: ReasoningRules): number {
  return Math.max(reasoning.floorTokens, answerTokens * REASONING_TOKENS_PER_ANSWER_TOKEN);
}

/** The largest claim accepted as is against our count of `ours` tokens (0 for 0). */
export function allowedClaim(ours: number): number {
  return ours + Math.max(Math.ceil((ours * USAGE_TOLERANCE_PERCENT) / 100), Math.min(ours, USAGE_TOLERANCE_FLOOR_TOKENS));
}

/** The smallest count of ours that accepts `claim`: the tolerance's inverse (allowedClaim is increasing). */
export function minCountAccepting(claim: number): number {
  let n = Math.max(0, Math.floor((claim * 100) / (100 + USAGE_TOLERANCE_PERCENT)) - USAGE_TOLERANCE_FLOOR_TOKENS);
  while (allowedClaim(n) < claim) n += 1;
  while (n > 0 && allowedClaim(n - 1) >= claim) n -= 1;
  return n;
}

/** The most prompt tokens an honest upstream can claim for a prompt of these byte bounds. */
export function promptClaimBound(bounds: TokenBounds): number {
  return allowedClaim(bounds.upper) + PROMPT_TEMPLATE_TOKENS;
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
      if (this.cancelled) return;
      // Whoever awaits count() later gets its error too; this handler is for a count nobody awaits (the request ended
      // first): its cancellation is expected, any other failure is a fault worth seeing, not a rejection to drop.
      this.count().catch((error: unknown) => {
        if (!this.cancelled) log.error("prompt count failed", { error });
      });
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
  rules: BillingRules,
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
  const output = outputCap(model, rules);
  return upper + output <= context ? { reservedPromptTokens: allowedClaim(upper), maxOutputTokens: output, counted: false } : null;
}

/** How much to reserve, from our count of the prompt (sliced; stops at the context length). */
export async function sizeByCount(
  meter: PromptMeter,
  model: { id: string; contextTokens: number; maxOutputTokens: number },
  rules: BillingRules,
): Promise<PromptSizing> {
  const context = model.contextTokens;
  const prompt = await meter.count();
  if (prompt >= context) throw contextExceeded(model, prompt, prompt === context ? "at least " : "");
  return {
    reservedPromptTokens: allowedClaim(prompt),
    maxOutputTokens: Math.min(outputCap(model, rules), context - prompt),
    counted: true,
  };
}

/** The output the request may use (forwarded as max_tokens, reserved), before the context: at most the model's cap. */
export function outputCap(model: { maxOutputTokens: number }, rules: BillingRules): number {
  return Math.min(rules.requestedOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
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
  /** The reasoning tokens billed, within completionTokens; null when the upstream reported none. */
  reasoningTokens: number | null;
  /** The upstream's claim, null when it sent none (then our count is billed). */
  claimed: ClaimedUsage | null;
  disputed: boolean;
  /**
   * Why the claim is outside what the request allows or the answer makes plausible (then it counts against the offer's
   * health); null when it is not.
   */
  outOfBounds: string | null;
  /**
   * svc's own count, shown beside the claim on the generation record: the prompt, the billable reply (within the
   * max_tokens forwarded), and the most hidden reasoning accepted for this answer (null when reasoning is not billed:
   * hidden reasoning cannot be counted, only bounded).
   */
  counted: { promptTokens: number; completionTokens: number; reasoningBoundTokens: number | null };
};

/** Hidden reasoning a request pays for: its budget and the floor of what an answer makes plausible. */
export type ReasoningRules = {
  effort: ReasoningEffort;
  /** The reasoning budget before the output forwarded caps it: reasoning.max_tokens, max_completion_tokens or the default. */
  budgetTokens: number;
  /** The effort's default budget: reasoning up to it is plausible for any answer. */
  floorTokens: number;
};

/** What of the request decides how its answer is billed (see the top of this file). */
export type BillingRules = {
  /** The request sent tools: tool calls in the answer are billed. */
  toolsRequested: boolean;
  /** The model bills hidden reasoning and the buyer asked for reasoning: its bounds; null when hidden reasoning is not billed. */
  reasoning: ReasoningRules | null;
  /**
   * The output the request asks for, before the model's cap and the context (null: the model's cap): max_completion_tokens,
   * else max_tokens, plus the reasoning budget when reasoning is billed.
   */
  requestedOutputTokens: number | null;
};

export function billingRules(
  request: ReasoningRequest & { tools?: readonly unknown[] | null },
  model: { billsReasoning: boolean; maxOutputTokens: number },
): BillingRules {
  const toolsRequested = (request.tools?.length ?? 0) > 0;
  const whole = request.max_completion_tokens ?? null;
  const effort = reasoningEffortOf(request);
  if (!model.billsReasoning || effort === null || effort === "none") {
    return { toolsRequested, reasoning: null, requestedOutputTokens: whole ?? request.max_tokens ?? null };
  }
  const floorTokens = defaultReasoningBudget(effort);
  const budget = request.reasoning?.max_tokens ?? whole ?? floorTokens;
  const budgetTokens = whole === null ? budget : Math.min(budget, whole);
  return {
    toolsRequested,
    reasoning: { effort, budgetTokens, floorTokens },
    requestedOutputTokens: whole ?? (request.max_tokens ?? model.maxOutputTokens) + budgetTokens,
  };
}

/** The part of the reply a buyer pays for: tool calls only when the request offered tools. */
function billableReply(message: AssistantMessageOut, rules: BillingRules): CountableReply {
  return rules.toolsRequested
    ? message
    : { content: message.content, refusal: message.refusal, reasoning_content: message.reasoning_content };
}

function isEmptyReply(reply: CountableReply): boolean {
  return !reply.content && !reply.refusal && !reply.reasoning_content && !reply.tool_calls?.length;
}

/** Our count of the exchange against the upstream's claim: what the buyer pays for (see the top of this file). */
export async function billUsage(
  meter: PromptMeter,
  answer: UpstreamAnswer,
  maxOutputTokens: number,
  rules: BillingRules,
): Promise<BilledUsage> {
  const claim = answer.usage;
  const reply = billableReply(answer.message, rules);
  const empty = isEmptyReply(reply);
  const reasoning = rules.reasoning;
  // Billable hidden reasoning is checked against its bound; the rest of the completion claim is what our count checks.
  const claimedReasoning = claim && reasoning ? Math.min(claim.reasoningTokens ?? 0, claim.completionTokens) : 0;
  const claimedVisible = claim ? claim.completionTokens - claimedReasoning : 0;
  // The reply is counted whole, up to max_tokens (beyond it nothing is billed): the generation record shows svc's count
  // beside the claim (#37), so counting no longer stops where the claim is accepted.
  const [oursPrompt, counted] = await Promise.all([meter.count(), empty ? 0 : countReplyTokens(reply, { limit: maxOutputTokens })]);
  const oursCompletion = Math.min(counted, maxOutputTokens);
  const budget = reasoning ? Math.min(reasoning.budgetTokens, maxOutputTokens) : 0;
  const plausible = reasoning ? plausibleReasoning(oursCompletion, reasoning) : 0;
  const reasoningBound = Math.min(budget, plausible);
  const ours = { promptTokens: oursPrompt, completionTokens: oursCompletion, reasoningBoundTokens: reasoning ? reasoningBound : null };
  if (!claim) {
    return {
      promptTokens: oursPrompt,
      completionTokens: oursCompletion,
      cachedTokens: null,
      reasoningTokens: null,
      claimed: null,
      disputed: false,
      outOfBounds: null,
      counted: ours,
    };
  }
  const promptBound = promptClaimBound(meter.bounds);
  const reasoningOk = claimedReasoning <= reasoningBound;
  const outOfBounds =
    claim.promptTokens > promptBound
      ? `usage claim of ${claim.promptTokens} prompt tokens for a prompt that allows at most ${promptBound}`
      : claim.completionTokens > maxOutputTokens
        ? `usage claim of ${claim.completionTokens} completion tokens beyond the max_tokens of ${maxOutputTokens} forwarded`
        : !reasoningOk
          ? `usage claim of ${claimedReasoning} reasoning tokens beyond the bound of ${reasoningBound} (a budget of ${budget}; ${plausible} plausible at effort ${reasoning!.effort} for a ${oursCompletion}-token answer)`
          : null;
  const promptOk = claim.promptTokens <= allowedClaim(oursPrompt);
  const completionInBounds = claim.completionTokens <= maxOutputTokens;
  const visibleOk = claimedVisible <= allowedClaim(oursCompletion);
  const billedReasoning = empty || !completionInBounds ? 0 : Math.min(claimedReasoning, reasoningBound);
  const promptTokens = promptOk ? claim.promptTokens : oursPrompt;
  const completionTokens = empty
    ? 0
    : completionInBounds
      ? Math.min((visibleOk ? claimedVisible : oursCompletion) + billedReasoning, maxOutputTokens)
      : oursCompletion;
  return {
    promptTokens,
    completionTokens,
    cachedTokens: claim.cachedTokens === null ? null : Math.min(claim.cachedTokens, promptTokens),
    reasoningTokens:
      claim.reasoningTokens === null ? null : reasoning ? billedReasoning : Math.min(claim.reasoningTokens, completionTokens),
    claimed: claim,
    disputed: !promptOk || !completionInBounds || !visibleOk || !reasoningOk,
    outOfBounds,
    counted: ours,
  };
}

/**
 * What a stream's ending bills, the rule the docs publish (/docs/streaming), before billUsage checks it as any answer:
 * - completed: the answer with the upstream's final usage claim (verified against svc's count, the tolerance rule);
 *   no claim → svc's count;
 * - any other ending (the client hung up, the upstream failed or went silent, the server stopped): what had arrived,
 *   by svc's own count (a claim so far is not final, and an answer cut short must not be billed at the upstream's
 *   word): never more than was generated, never $0 once something billable arrived;
 * - an offer that declares it bills a cancelled answer in full has its stream read to the end after the client left
 *   (bounded by max_tokens and STREAM_MAX_DURATION_MS): the whole answer, as completed, billed (`whole`);
 * - nothing billable arrived: null, nothing billed (the hold is released).
 */
export function streamedAnswerToBill(
  end: CompletionEnd,
  answer: UpstreamAnswer,
  rules: BillingRules,
  /** The answer was read to its end though the client left (the offer bills a cancelled answer in full). */
  whole = false,
): UpstreamAnswer | null {
  if (end === "completed" || whole) return answer;
  if (isEmptyReply(billableReply(answer.message, rules))) return null;
  return { ...answer, usage: null };
}
