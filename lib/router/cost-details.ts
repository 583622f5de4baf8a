/**
 * The cost an answer states (usage.cost, usage.cost_details) and its generation record repeats: built from the clear's
 * own numbers, the ones svc_clear_batch posted to its journal entry, never recomputed here.
 */
import "server-only";
import { formatMicros } from "@/lib/money";
import type { ClearResult } from "@/lib/router/holds";
import type { CostDetails } from "@/lib/router/schemas";

/** Claims are stored clamped to their integer columns; the answer states them as the generation record will. */
const INT_MAX = 2_147_483_647;

/**
 * `usage.cost` and `usage.cost_details` of an answer and of its generation record, from the clear's own numbers
 * (what its journal entry holds). `cost` is the charge as a JSON number of USD, as OpenRouter's clients read it:
 * the double nearest to the exact decimal, which cost_details.charge states.
 */
export function costFields(
  clear: Pick<ClearResult, "chargeMicros" | "supplierMicros" | "feeMicros" | "burnMicroDiem" | "priceCents">,
  tokens: {
    billedPromptTokens: number;
    billedCompletionTokens: number;
    claimedPromptTokens: number | null;
    claimedCompletionTokens: number | null;
    billedReasoningTokens: number | null;
    claimedReasoningTokens: number | null;
    usageEstimated: boolean;
    usageDisputed: boolean;
    /** svc's own count beside the claim (null on completions cleared before it was kept). */
    counted: { promptTokens: number | null; completionTokens: number | null; reasoningBoundTokens: number | null };
    billedCachedTokens: number | null;
    claimedCachedTokens: number | null;
  },
): { cost: number; cost_details: CostDetails } {
  const charge = formatMicros(clear.chargeMicros);
  const clamp = (n: number | null) => (n === null ? null : Math.min(n, INT_MAX));
  return {
    cost: Number(charge),
    cost_details: {
      charge,
      supplier_share: formatMicros(clear.supplierMicros),
      platform_fee: formatMicros(clear.feeMicros),
      burn: formatMicros(clear.burnMicroDiem),
      price_cents_per_diem: clear.priceCents,
      billed_prompt_tokens: tokens.billedPromptTokens,
      billed_completion_tokens: tokens.billedCompletionTokens,
      claimed_prompt_tokens: clamp(tokens.claimedPromptTokens),
      claimed_completion_tokens: clamp(tokens.claimedCompletionTokens),
      billed_reasoning_tokens: tokens.billedReasoningTokens,
      claimed_reasoning_tokens: clamp(tokens.claimedReasoningTokens),
      counted_prompt_tokens: clamp(tokens.counted.promptTokens),
      counted_completion_tokens: clamp(tokens.counted.completionTokens),
      reasoning_tokens_bound: clamp(tokens.counted.reasoningBoundTokens),
      billed_cached_tokens: tokens.billedCachedTokens,
      claimed_cached_tokens: clamp(tokens.claimedCachedTokens),
      usage_estimated: tokens.usageEstimated,
      usage_disputed: tokens.usageDisputed,
    },
  };
}
