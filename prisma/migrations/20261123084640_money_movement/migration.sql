-- CreateEnum
CREATE TYPE "TransactionKind" AS ENUM ('collection', 'payout', 'swap', 'card_topup', 'card_withdrawal', 'card_spend');

-- CreateEnum
CREATE TYPE "TransactionDirection" AS ENUM ('credit', 'debit');

-- CreateEnum
CREATE TYPE "TransactionStatus" AS ENUM ('created', 'unknown', 'initiated', 'pending', 'processing', 'success', 'failed', 'expired', 'reversed');

-- CreateEnum
CREATE TYPE "StatusChangeSource" AS ENUM ('api', 'webhook', 'reconciliation');

-- CreateTable
CREATE TABLE "beneficiaries" (
    "id" UUID NOT NULL,
    "provider_id" TEXT,
    "customer_id" UUID NOT NULL,
    "country" VARCHAR(2) NOT NULL,
    "currency" VARCHAR(10) NOT NULL,
    "type" TEXT NOT NULL,
    "destination" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "reference" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "beneficiaries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "collections" (
    "id" UUID NOT NULL,
    "provider_id" TEXT,
    "customer_id" UUID NOT NULL,
    "transaction_id" UUID NOT NULL,
    "country" VARCHAR(2) NOT NULL,
    "account_name" TEXT,
    "account_number" TEXT,
    "bank_name" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "collections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "swap_quotes" (
    "id" UUID NOT NULL,
    "provider_id" TEXT NOT NULL,
    "client_id" UUID NOT NULL,
    "source_currency" VARCHAR(10) NOT NULL,
    "target_currency" VARCHAR(10) NOT NULL,
    "source_amount" BIGINT NOT NULL,
    "target_amount" BIGINT NOT NULL,
    "fee" BIGINT NOT NULL,
    "rate" DECIMAL(30,12) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "executed_at" TIMESTAMPTZ(3),
    "transaction_id" UUID,
    "provider_payload" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "swap_quotes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "virtual_accounts" (
    "id" UUID NOT NULL,
    "provider_id" TEXT NOT NULL,
    "customer_id" UUID NOT NULL,
    "bank" TEXT NOT NULL,
    "bank_name" TEXT NOT NULL,
    "account_name" TEXT NOT NULL,
    "account_number" TEXT NOT NULL,
    "currency" VARCHAR(10) NOT NULL,
    "status" TEXT NOT NULL,
    "reference" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "virtual_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transactions" (
    "id" UUID NOT NULL,
    "kind" "TransactionKind" NOT NULL,
    "direction" "TransactionDirection" NOT NULL,
    "status" "TransactionStatus" NOT NULL,
    "amount" BIGINT NOT NULL,
    "fee" BIGINT NOT NULL DEFAULT 0,
    "currency" VARCHAR(10) NOT NULL,
    "counter_amount" BIGINT,
    "counter_currency" VARCHAR(10),
    "exchange_rate" DECIMAL(30,12),
    "customer_id" UUID,
    "beneficiary_id" UUID,
    "card_id" UUID,
    "provider_id" TEXT,
    "reference" TEXT NOT NULL,
    "description" TEXT,
    "failure_reason" TEXT,
    "confirm_requested_at" TIMESTAMPTZ(3),
    "provider_payload" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transaction_status_changes" (
    "id" BIGSERIAL NOT NULL,
    "transaction_id" UUID NOT NULL,
    "from" "TransactionStatus",
    "to" "TransactionStatus" NOT NULL,
    "source" "StatusChangeSource" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "payload" JSONB,

    CONSTRAINT "transaction_status_changes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'in_progress',
    "response_status" INTEGER,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "beneficiaries_provider_id_key" ON "beneficiaries"("provider_id");

-- CreateIndex
CREATE UNIQUE INDEX "beneficiaries_reference_key" ON "beneficiaries"("reference");

-- CreateIndex
CREATE INDEX "beneficiaries_customer_id_created_at_idx" ON "beneficiaries"("customer_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "collections_provider_id_key" ON "collections"("provider_id");

-- CreateIndex
CREATE UNIQUE INDEX "collections_transaction_id_key" ON "collections"("transaction_id");

-- CreateIndex
CREATE INDEX "collections_customer_id_created_at_idx" ON "collections"("customer_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "swap_quotes_provider_id_key" ON "swap_quotes"("provider_id");

-- CreateIndex
CREATE UNIQUE INDEX "swap_quotes_transaction_id_key" ON "swap_quotes"("transaction_id");

-- CreateIndex
CREATE UNIQUE INDEX "virtual_accounts_provider_id_key" ON "virtual_accounts"("provider_id");

-- CreateIndex
CREATE UNIQUE INDEX "virtual_accounts_reference_key" ON "virtual_accounts"("reference");

-- CreateIndex
CREATE INDEX "virtual_accounts_customer_id_created_at_idx" ON "virtual_accounts"("customer_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "transactions_provider_id_key" ON "transactions"("provider_id");

-- CreateIndex
CREATE UNIQUE INDEX "transactions_reference_key" ON "transactions"("reference");

-- CreateIndex
CREATE INDEX "transactions_created_at_id_idx" ON "transactions"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transactions_status_created_at_idx" ON "transactions"("status", "created_at" DESC);

-- CreateIndex
CREATE INDEX "transactions_kind_created_at_idx" ON "transactions"("kind", "created_at" DESC);

-- CreateIndex
CREATE INDEX "transactions_currency_created_at_idx" ON "transactions"("currency", "created_at" DESC);

-- CreateIndex
CREATE INDEX "transactions_customer_id_created_at_idx" ON "transactions"("customer_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "transaction_status_changes_transaction_id_at_idx" ON "transaction_status_changes"("transaction_id", "at");

-- CreateIndex
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_records_client_id_key_key" ON "idempotency_records"("client_id", "key");

-- AddForeignKey
ALTER TABLE "beneficiaries" ADD CONSTRAINT "beneficiaries_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "collections" ADD CONSTRAINT "collections_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "collections" ADD CONSTRAINT "collections_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "virtual_accounts" ADD CONSTRAINT "virtual_accounts_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_beneficiary_id_fkey" FOREIGN KEY ("beneficiary_id") REFERENCES "beneficiaries"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transaction_status_changes" ADD CONSTRAINT "transaction_status_changes_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
