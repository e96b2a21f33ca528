-- CreateEnum
CREATE TYPE "CardStatus" AS ENUM ('created', 'unknown', 'pending', 'active', 'frozen', 'terminated', 'failed');

-- AlterTable
ALTER TABLE "webhook_events" ADD COLUMN     "next_attempt_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "card_holders" (
    "id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "provider_user_id" TEXT,
    "id_type" TEXT NOT NULL,
    "id_number" TEXT NOT NULL,
    "first_name" TEXT NOT NULL,
    "last_name" TEXT NOT NULL,
    "phone" TEXT NOT NULL,
    "bvn" TEXT,
    "date_of_birth" TEXT,
    "address" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "failure_reason" TEXT,
    "provider_payload" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "card_holders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cards" (
    "id" UUID NOT NULL,
    "provider_id" TEXT,
    "customer_id" UUID NOT NULL,
    "card_holder_id" UUID NOT NULL,
    "brand" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "name_on_card" TEXT,
    "last4" VARCHAR(4),
    "expiry_month" INTEGER,
    "expiry_year" INTEGER,
    "status" "CardStatus" NOT NULL,
    "created_status" TEXT,
    "balance" BIGINT NOT NULL DEFAULT 0,
    "currency" VARCHAR(10) NOT NULL DEFAULT 'USD',
    "initial_amount" BIGINT NOT NULL DEFAULT 0,
    "reference" TEXT NOT NULL,
    "billing_address" JSONB,
    "failure_reason" TEXT,
    "provider_payload" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "cards_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_subscriptions" (
    "id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "event_types" TEXT[],
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" UUID NOT NULL,
    "subscription_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "card_holders_customer_id_key" ON "card_holders"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "card_holders_provider_user_id_key" ON "card_holders"("provider_user_id");

-- CreateIndex
CREATE UNIQUE INDEX "cards_provider_id_key" ON "cards"("provider_id");

-- CreateIndex
CREATE UNIQUE INDEX "cards_reference_key" ON "cards"("reference");

-- CreateIndex
CREATE INDEX "cards_customer_id_created_at_id_idx" ON "cards"("customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "cards_status_created_at_id_idx" ON "cards"("status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "cards_created_at_id_idx" ON "cards"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_subscriptions_client_id_created_at_idx" ON "webhook_subscriptions"("client_id", "created_at");

-- CreateIndex
CREATE INDEX "outbox_messages_status_next_attempt_at_idx" ON "outbox_messages"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "outbox_messages_subscription_id_created_at_idx" ON "outbox_messages"("subscription_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_events_outcome_next_attempt_at_idx" ON "webhook_events"("outcome", "next_attempt_at");

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_card_id_fkey" FOREIGN KEY ("card_id") REFERENCES "cards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "card_holders" ADD CONSTRAINT "card_holders_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cards" ADD CONSTRAINT "cards_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cards" ADD CONSTRAINT "cards_card_holder_id_fkey" FOREIGN KEY ("card_holder_id") REFERENCES "card_holders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "outbox_messages" ADD CONSTRAINT "outbox_messages_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
