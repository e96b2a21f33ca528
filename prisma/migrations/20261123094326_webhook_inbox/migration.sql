-- CreateTable
CREATE TABLE "webhook_events" (
    "id" UUID NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "provider_id" TEXT,
    "reference" TEXT,
    "raw_body" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "signature_header" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processed_at" TIMESTAMPTZ(3),
    "outcome" TEXT NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_events_dedupe_key_key" ON "webhook_events"("dedupe_key");

-- CreateIndex
CREATE INDEX "webhook_events_outcome_received_at_idx" ON "webhook_events"("outcome", "received_at");
