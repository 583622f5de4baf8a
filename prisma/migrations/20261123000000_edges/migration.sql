-- Sign-in nonces are capped per wallet on every insert (lib/auth/nonces.ts): find a wallet's newest quickly.
CREATE INDEX "siwe_nonces_wallet_address_issued_at_idx" ON "siwe_nonces"("wallet_address", "issued_at");
