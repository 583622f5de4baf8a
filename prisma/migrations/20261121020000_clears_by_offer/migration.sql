-- CreateIndex
CREATE INDEX "clears_offer_id_created_at_idx" ON "clears"("offer_id", "created_at");

