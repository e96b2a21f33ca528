-- CreateIndex
CREATE INDEX "transactions_created_by_created_at_id_idx" ON "transactions"("created_by", "created_at" DESC, "id" DESC);
