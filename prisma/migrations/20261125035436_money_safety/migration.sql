-- AlterEnum
ALTER TYPE "StatusChangeSource" ADD VALUE 'manual';

-- AlterEnum
ALTER TYPE "TransactionStatus" ADD VALUE 'needs_review';

-- AlterTable
ALTER TABLE "cards" ADD COLUMN     "transition" TEXT,
ADD COLUMN     "transition_started_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "idempotency_records" ADD COLUMN     "lease_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "resource_id" TEXT,
ADD COLUMN     "resource_type" TEXT;

-- AlterTable
ALTER TABLE "transaction_status_changes" ADD COLUMN     "actor_id" UUID;
