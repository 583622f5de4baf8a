-- A withdrawal can carry the client's Idempotency-Key (issue 38): a request whose answer was lost is asked about by
-- that key (GET /v1/supply/withdrawals?idempotency_key=) and, sent again with it, is never performed twice. Hand-written.

ALTER TABLE "withdrawals" ADD COLUMN "idempotency_key" TEXT;

CREATE UNIQUE INDEX "withdrawals_account_id_idempotency_key_key" ON "withdrawals"("account_id", "idempotency_key");
