-- Suppliers with names (issue 38): an account may set a display name, shown beside its public id (sup_…) where buyers
-- see offers. Unique case-insensitively through display_name_key (its lower case), which the application writes with
-- it. Hand-written.

ALTER TABLE "accounts" ADD COLUMN "display_name" TEXT, ADD COLUMN "display_name_key" TEXT;

CREATE UNIQUE INDEX "accounts_display_name_key_key" ON "accounts"("display_name_key");
