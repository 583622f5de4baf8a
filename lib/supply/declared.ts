import "server-only";
import type { Prisma } from "@/lib/db/client";
import type { CreateOfferInput, UpdateOfferInput } from "@/lib/supply/schemas";

/**
 * The offer columns of what a supplier declares (quantization, data policy, limits), from a create or a patch: only
 * the fields given; a limit given as null goes back to the model's. The supplier's word, shown as such: the fidelity
 * probes (lib/probes) are the platform's check.
 */
export function declaredFields(
  input: Pick<
    UpdateOfferInput | CreateOfferInput,
    "quantization" | "data_policy" | "context_tokens" | "max_output_tokens" | "streaming" | "prompt_caching"
  >,
) {
  return {
    ...(input.prompt_caching?.caches_prompts !== undefined && { cachesPrompts: input.prompt_caching.caches_prompts }),
    ...(input.prompt_caching?.retention_seconds !== undefined && { cacheRetentionSeconds: input.prompt_caching.retention_seconds }),
    ...(input.streaming?.streams !== undefined && { streams: input.streaming.streams }),
    ...(input.streaming?.bills_cancelled_in_full !== undefined && { billsCancelledInFull: input.streaming.bills_cancelled_in_full }),
    ...(input.quantization !== undefined && { quantization: input.quantization }),
    ...(input.data_policy !== undefined && {
      retainsPrompts: input.data_policy.retains_prompts,
      trainsOnPrompts: input.data_policy.trains_on_prompts,
    }),
    ...(input.context_tokens !== undefined && { contextTokens: input.context_tokens }),
    ...(input.max_output_tokens !== undefined && { maxOutputTokens: input.max_output_tokens }),
  } satisfies Prisma.OfferUncheckedUpdateInput;
}
