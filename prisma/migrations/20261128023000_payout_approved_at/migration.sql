-- AlterTable
ALTER TABLE "transactions" ADD COLUMN     "approved_at" TIMESTAMPTZ(3);
