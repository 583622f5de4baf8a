-- Market quality (#23), the offer's own fields: what its supplier declares (quantization, data policy, the limits it
-- serves) and what the platform's fidelity probes found (lib/probes). A probe-flagged offer the operator delists
-- is off the book until it passes again: svc_offer_routable and svc_offer_on_book take probe_delisted, so their old
-- signatures go (IF EXISTS: a new database has none until prisma/functions/ installs them, after the migrations).

CREATE TYPE "offer_quantization" AS ENUM ('fp16', 'bf16', 'fp8', 'int8', 'int4', 'unknown');
CREATE TYPE "probe_status" AS ENUM ('unprobed', 'passing', 'flagged');

ALTER TABLE "offers"
  ADD COLUMN "quantization" "offer_quantization" NOT NULL DEFAULT 'unknown',
  -- An offer that has not said is taken to retain prompts and train on them: data_collection "deny" excludes it.
  ADD COLUMN "retains_prompts" boolean NOT NULL DEFAULT true,
  ADD COLUMN "trains_on_prompts" boolean NOT NULL DEFAULT true,
  ADD COLUMN "context_tokens" integer,
  ADD COLUMN "max_output_tokens" integer,
  ADD COLUMN "probe_status" "probe_status" NOT NULL DEFAULT 'unprobed',
  ADD COLUMN "probe_delisted" boolean NOT NULL DEFAULT false,
  ADD COLUMN "probed_at" timestamptz(3),
  ADD COLUMN "probe_flagged_at" timestamptz(3),
  ADD COLUMN "probe_flag_reason" text;

DROP FUNCTION IF EXISTS "svc_offer_on_book"(offer_status, timestamptz, bigint, bigint, bigint, timestamptz);
DROP FUNCTION IF EXISTS "svc_offer_routable"(offer_status, timestamptz, integer, bigint, bigint, bigint, integer, bigint, timestamptz);
