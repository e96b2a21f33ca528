-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "TransactionStatus" ADD VALUE 'awaiting_approval';
ALTER TYPE "TransactionStatus" ADD VALUE 'rejected';

-- AlterTable
ALTER TABLE "beneficiaries" ADD COLUMN     "created_by" UUID;

-- AlterTable
ALTER TABLE "card_holders" ADD COLUMN     "created_by" UUID;

-- AlterTable
ALTER TABLE "cards" ADD COLUMN     "created_by" UUID;

-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "created_by" UUID;

-- AlterTable
ALTER TABLE "transactions" ADD COLUMN     "created_by" UUID;

-- AlterTable
ALTER TABLE "virtual_accounts" ADD COLUMN     "created_by" UUID;

-- CreateTable
CREATE TABLE "audit_events" (
    "seq" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_id" UUID,
    "actor_name" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT,
    "request_id" TEXT,
    "outcome" TEXT NOT NULL,
    "details" JSONB,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "reconciliation_runs" (
    "id" UUID NOT NULL,
    "period_from" TIMESTAMPTZ(3) NOT NULL,
    "period_to" TIMESTAMPTZ(3) NOT NULL,
    "kinds" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'queued',
    "requested_by" UUID,
    "cursor_at" TIMESTAMPTZ(3),
    "cursor_id" UUID,
    "total" INTEGER NOT NULL DEFAULT 0,
    "processed" INTEGER NOT NULL DEFAULT 0,
    "totals" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "reconciliation_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reconciliation_items" (
    "id" BIGSERIAL NOT NULL,
    "run_id" UUID NOT NULL,
    "class" TEXT NOT NULL,
    "transaction_id" UUID,
    "provider_id" TEXT,
    "kind" TEXT,
    "local_status" TEXT,
    "provider_status" TEXT,
    "local_amount" BIGINT,
    "provider_amount" BIGINT,
    "local_fee" BIGINT,
    "provider_fee" BIGINT,
    "currency" VARCHAR(10),
    "provider_currency" VARCHAR(10),
    "details" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reconciliation_items_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_events_hash_key" ON "audit_events"("hash");

-- CreateIndex
CREATE INDEX "audit_events_actor_id_seq_idx" ON "audit_events"("actor_id", "seq");

-- CreateIndex
CREATE INDEX "audit_events_action_seq_idx" ON "audit_events"("action", "seq");

-- CreateIndex
CREATE INDEX "audit_events_target_id_seq_idx" ON "audit_events"("target_id", "seq");

-- CreateIndex
CREATE INDEX "audit_events_at_idx" ON "audit_events"("at");

-- CreateIndex
CREATE INDEX "reconciliation_runs_created_at_id_idx" ON "reconciliation_runs"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "reconciliation_runs_period_from_period_to_status_idx" ON "reconciliation_runs"("period_from", "period_to", "status");

-- CreateIndex
CREATE INDEX "reconciliation_items_run_id_class_id_idx" ON "reconciliation_items"("run_id", "class", "id");

-- CreateIndex
CREATE UNIQUE INDEX "reconciliation_items_run_id_transaction_id_key" ON "reconciliation_items"("run_id", "transaction_id");

-- CreateIndex
CREATE UNIQUE INDEX "reconciliation_items_run_id_provider_id_key" ON "reconciliation_items"("run_id", "provider_id");

-- AddForeignKey
ALTER TABLE "reconciliation_items" ADD CONSTRAINT "reconciliation_items_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "reconciliation_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
