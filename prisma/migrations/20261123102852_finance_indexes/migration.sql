-- DropIndex
DROP INDEX "transactions_currency_created_at_idx";

-- DropIndex
DROP INDEX "transactions_customer_id_created_at_idx";

-- DropIndex
DROP INDEX "transactions_kind_created_at_idx";

-- DropIndex
DROP INDEX "transactions_status_created_at_idx";

-- CreateIndex
CREATE INDEX "transactions_status_created_at_id_idx" ON "transactions"("status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transactions_kind_created_at_id_idx" ON "transactions"("kind", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transactions_currency_created_at_id_idx" ON "transactions"("currency", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transactions_customer_id_created_at_id_idx" ON "transactions"("customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transactions_card_id_created_at_id_idx" ON "transactions"("card_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transactions_beneficiary_id_created_at_id_idx" ON "transactions"("beneficiary_id", "created_at" DESC, "id" DESC);
