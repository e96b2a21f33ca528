-- AlterTable
ALTER TABLE "webhook_events" ADD COLUMN     "headers" JSONB;
