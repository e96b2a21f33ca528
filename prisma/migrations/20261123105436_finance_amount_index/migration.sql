-- CreateIndex
CREATE INDEX "transactions_amount_idx" ON "transactions"("amount");
