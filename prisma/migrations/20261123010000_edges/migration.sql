-- Sign-in nonces are capped per wallet on every insert (lib/auth/nonces.ts): find a wallet's newest quickly.
CREATE INDEX "siwe_nonces_wallet_address_issued_at_idx" ON "siwe_nonces"("wallet_address", "issued_at");

-- A withdrawal is reversed only on proof (lib/supply/withdrawals.ts): a failed receipt, or its sender's nonce used by another transaction.
ALTER TABLE "withdrawals" ADD COLUMN "tx_from" TEXT,
ADD COLUMN "tx_nonce" INTEGER;
