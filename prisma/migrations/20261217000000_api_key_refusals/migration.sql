-- Refused requests per API key (#38): one row per key, UTC minute and error code, counted up (lib/account/refusals.ts).

-- CreateTable
CREATE TABLE "api_key_refusals" (
    "api_key_id" UUID NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "code" TEXT NOT NULL,
    "account_id" UUID NOT NULL,
    "status" INTEGER NOT NULL,
    "count" INTEGER NOT NULL,
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    "last_message" TEXT NOT NULL,

    CONSTRAINT "api_key_refusals_pkey" PRIMARY KEY ("api_key_id","minute","code")
);

-- CreateIndex
CREATE INDEX "api_key_refusals_account_id_last_at_idx" ON "api_key_refusals"("account_id", "last_at");

-- AddForeignKey
ALTER TABLE "api_key_refusals" ADD CONSTRAINT "api_key_refusals_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

