/**
 * GET /v1/generations/{id}: one completion of the caller's account as it was cleared, found by either id the buyer may
 * hold (chatcmpl-…, or resp_… for a POST /v1/responses answer) and shown under the one it was given, with svc's own
 * token count beside the claimed and billed ones and the supplier's display name. A malformed id is a 400 (it
 * cannot be any completion's); an unknown id and another account's id are the same 404, found by the same one
 * statement (the completion's primary key, then its account compared), so neither the answer nor its timing tells
 * whether another account's completion exists.
 */
import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { costFields } from "@/lib/router/cost-details";
import { completionIdOf, givenIdOf } from "@/lib/wire";
import { COMPLETION_ID_PATTERN, type CompletionEnd, type Generation } from "@/lib/router/schemas";
import { supplierPublicId } from "@/lib/supply/public-id";

type Row = {
  id: string;
  created_at: Date;
  model_id: string;
  offer_id: string;
  supplier_id: string;
  supplier_name: string | null;
  responses_api: boolean;
  counted_prompt_tokens: number | null;
  counted_completion_tokens: number | null;
  reasoning_bound_tokens: number | null;
  finish_reason: string | null;
  end_reason: CompletionEnd;
  streamed: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  claimed_prompt_tokens: number | null;
  claimed_completion_tokens: number | null;
  reasoning_tokens: number | null;
  claimed_reasoning_tokens: number | null;
  cached_tokens: number | null;
  claimed_cached_tokens: number | null;
  usage_estimated: boolean;
  usage_disputed: boolean;
  latency_ms: number;
  total_latency_ms: number | null;
  price_cents: number;
  burn_micro_diem: bigint;
  charge_micros: bigint;
  supplier_micros: bigint;
  fee_micros: bigint;
  key_id: string;
  key_name: string;
  key_prefix: string;
  journal_entry_id: string;
};

export async function getGeneration(accountId: string, requestedId: string): Promise<Generation> {
  // A response of POST /v1/responses is found by its own id too: resp_ and its completion's random part.
  const id = completionIdOf(requestedId);
  if (!COMPLETION_ID_PATTERN.test(id)) {
    throw new AppError("invalid_request", "id: not a generation id (chatcmpl- or resp_, and up to 64 letters and digits).", {
      details: { param: "id" },
    });
  }
  const [row] = await db.$queryRaw<Row[]>`
    SELECT c.id, c.created_at, c.model_id, c.offer_id::text, o.supplier_id::text, sa.display_name AS supplier_name,
           c.responses_api, c.counted_prompt_tokens, c.counted_completion_tokens, c.reasoning_bound_tokens, c.finish_reason, c.end_reason, c.streamed,
           c.prompt_tokens, c.completion_tokens, c.claimed_prompt_tokens, c.claimed_completion_tokens,
           c.reasoning_tokens, c.claimed_reasoning_tokens, c.cached_tokens, c.claimed_cached_tokens, c.usage_estimated, c.usage_disputed, c.latency_ms, c.total_latency_ms,
           cl.price_cents, cl.burn_micro_diem, cl.charge_micros, cl.supplier_micros, cl.fee_micros,
           k.id::text AS key_id, k.name AS key_name, k.prefix AS key_prefix, je.id::text AS journal_entry_id
    FROM completions c
    JOIN clears cl ON cl.completion_id = c.id
    JOIN journal_entries je ON je.clear_id = cl.id
    JOIN api_keys k ON k.id = c.api_key_id
    JOIN offers o ON o.id = c.offer_id
    JOIN accounts sa ON sa.id = o.supplier_id
    WHERE c.id = ${id} AND c.account_id = ${accountId}::uuid`;
  if (!row) throw new AppError("not_found", "No such generation on your account.");
  return {
    id: givenIdOf(row.id, row.responses_api),
    completion_id: row.id,
    object: "generation",
    created_at: row.created_at.toISOString(),
    model: row.model_id,
    offer_id: row.offer_id,
    supplier_id: supplierPublicId(row.supplier_id),
    supplier_name: row.supplier_name,
    finish_reason: row.finish_reason as Generation["finish_reason"],
    usage: {
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      total_tokens: row.prompt_tokens + row.completion_tokens,
      ...(row.cached_tokens !== null && { prompt_tokens_details: { cached_tokens: row.cached_tokens } }),
      ...(row.reasoning_tokens !== null && { completion_tokens_details: { reasoning_tokens: row.reasoning_tokens } }),
      ...costFields(
        {
          chargeMicros: row.charge_micros,
          supplierMicros: row.supplier_micros,
          feeMicros: row.fee_micros,
          burnMicroDiem: row.burn_micro_diem,
          priceCents: row.price_cents,
        },
        {
          billedPromptTokens: row.prompt_tokens,
          billedCompletionTokens: row.completion_tokens,
          claimedPromptTokens: row.claimed_prompt_tokens,
          claimedCompletionTokens: row.claimed_completion_tokens,
          billedReasoningTokens: row.reasoning_tokens,
          claimedReasoningTokens: row.claimed_reasoning_tokens,
          usageEstimated: row.usage_estimated,
          usageDisputed: row.usage_disputed,
          counted: {
            promptTokens: row.counted_prompt_tokens,
            completionTokens: row.counted_completion_tokens,
            reasoningBoundTokens: row.reasoning_bound_tokens,
          },
          billedCachedTokens: row.cached_tokens,
          claimedCachedTokens: row.claimed_cached_tokens,
        },
      ),
    },
    upstream_latency_ms: row.latency_ms,
    total_latency_ms: row.total_latency_ms,
    end: row.end_reason,
    streamed: row.streamed,
    key: { id: row.key_id, name: row.key_name, prefix: row.key_prefix },
    journal_entry_id: row.journal_entry_id,
  };
}
