-- The record a buyer can follow (#37). A completion keeps the id the buyer was given (responses_api: the answer was a
-- POST /v1/responses response, resp_ and the completion's random part; else its chatcmpl- id) and svc's own count
-- beside the claimed and billed ones: the prompt and the reply by svc's tokenizer (counted_prompt_tokens,
-- counted_completion_tokens: the reply as billed, within the max_tokens forwarded), and the most hidden reasoning svc
-- accepts for it (reasoning_bound_tokens: the reasoning budget and what the answer makes plausible; null when
-- reasoning is not billed). NULL on completions cleared before.
ALTER TABLE "completions"
  ADD COLUMN "responses_api" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "counted_prompt_tokens" INTEGER,
  ADD COLUMN "counted_completion_tokens" INTEGER,
  ADD COLUMN "reasoning_bound_tokens" INTEGER;

ALTER TYPE "svc_clear_item"
  ADD ATTRIBUTE "responses_api" boolean,
  ADD ATTRIBUTE "counted_prompt_tokens" bigint,
  ADD ATTRIBUTE "counted_completion_tokens" bigint,
  ADD ATTRIBUTE "reasoning_bound_tokens" bigint;
