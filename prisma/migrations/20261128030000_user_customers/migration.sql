-- People (issuer + subject at the OpenID provider) bound to their customer: at most one each way (docs/auth.md).
-- CreateTable
CREATE TABLE "user_customers" (
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "customer_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_customers_pkey" PRIMARY KEY ("issuer","subject")
);

-- CreateIndex
CREATE UNIQUE INDEX "user_customers_customer_id_key" ON "user_customers"("customer_id");

-- AddForeignKey
ALTER TABLE "user_customers" ADD CONSTRAINT "user_customers_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

