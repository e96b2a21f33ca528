-- Personal data encrypted at rest (src/common/crypto, docs/operations.md "Personal data encryption").
-- SQL cannot encrypt: existing rows keep their plaintext (read as legacy values) until the deploy runs
-- `npm run pii -- rotate` after `prisma migrate deploy`, which encrypts them and fills the hashes.

-- AlterTable: the address becomes the ciphertext of its JSON text (legacy rows keep the JSON text).
ALTER TABLE "card_holders" ADD COLUMN     "bvn_hash" TEXT,
ADD COLUMN     "id_number_hash" TEXT,
ALTER COLUMN "address" SET DATA TYPE TEXT USING "address"::text;

-- CreateIndex
CREATE INDEX "card_holders_bvn_hash_idx" ON "card_holders"("bvn_hash");

-- CreateIndex
CREATE INDEX "card_holders_id_number_hash_idx" ON "card_holders"("id_number_hash");
