-- Audit events are now written unchained in the change's transaction (no lock, no read) and sealed
-- into the hash chain afterwards by the sealer (src/audit/audit-sealer.service.ts), which alone
-- assigns seq, prev_hash and hash. `id` is the insertion order that sealing follows.
-- Existing rows stay valid: they keep seq, prev_hash and hash (the hash covers seq, not id) and take
-- id = seq, so new rows are numbered after them.

ALTER TABLE "audit_events" ADD COLUMN "id" BIGINT;
UPDATE "audit_events" SET "id" = "seq";
CREATE SEQUENCE "audit_events_id_seq" OWNED BY "audit_events"."id";
SELECT setval('"audit_events_id_seq"', COALESCE((SELECT max("id") FROM "audit_events"), 0) + 1, false);

ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_pkey",
ALTER COLUMN "id" SET NOT NULL,
ALTER COLUMN "id" SET DEFAULT nextval('"audit_events_id_seq"'),
ADD CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id"),
ALTER COLUMN "seq" DROP NOT NULL,
ALTER COLUMN "seq" DROP DEFAULT,
ALTER COLUMN "prev_hash" DROP NOT NULL,
ALTER COLUMN "hash" DROP NOT NULL,
-- Sealed all at once or not at all.
ADD CONSTRAINT "audit_events_sealed_together" CHECK (("seq" IS NULL) = ("hash" IS NULL) AND ("seq" IS NULL) = ("prev_hash" IS NULL));
DROP SEQUENCE "audit_events_seq_seq";

-- CreateIndex
CREATE UNIQUE INDEX "audit_events_seq_key" ON "audit_events"("seq");

-- The sealer's work list (not in schema.prisma: Prisma has no partial indexes without a preview feature).
CREATE INDEX "audit_events_unsealed_idx" ON "audit_events"("id") WHERE "seq" IS NULL;
