-- Answers checked against what their request constrained them to (issue 37): per offer, UTC day and kind (a tool
-- call against the request's tool schemas, a strict json_schema answer against its schema), how many were checked
-- and how many failed, by how (lib/upstream/answer-checks.ts, lib/market/quality/answer-checks.ts).

-- CreateTable
CREATE TABLE "offer_answer_checks" (
    "offer_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "kind" TEXT NOT NULL,
    "checked" INTEGER NOT NULL DEFAULT 0,
    "invalid_json" INTEGER NOT NULL DEFAULT 0,
    "unknown_tool" INTEGER NOT NULL DEFAULT 0,
    "schema_mismatch" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "offer_answer_checks_pkey" PRIMARY KEY ("offer_id","day","kind")
);

-- AddForeignKey
ALTER TABLE "offer_answer_checks" ADD CONSTRAINT "offer_answer_checks_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

