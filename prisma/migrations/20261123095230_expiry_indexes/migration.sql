-- CreateIndex
CREATE INDEX "collections_expires_at_idx" ON "collections"("expires_at");

-- CreateIndex
CREATE INDEX "swap_quotes_status_expires_at_idx" ON "swap_quotes"("status", "expires_at");
