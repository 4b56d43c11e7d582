CREATE TABLE "billing_balance_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"amount_cents" bigint NOT NULL,
	"kind" text NOT NULL,
	"description" text NOT NULL,
	"crypto_charge_id" uuid,
	"invoice_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "crypto_charges" ALTER COLUMN "invoice_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "crypto_charges" ADD COLUMN "type" text;--> statement-breakpoint
ALTER TABLE "billing_balance_entries" ADD CONSTRAINT "billing_balance_entries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_balance_entries" ADD CONSTRAINT "billing_balance_entries_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "billing_balance_entries_account" ON "billing_balance_entries" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "billing_balance_entries_charge" ON "billing_balance_entries" USING btree ("crypto_charge_id");--> statement-breakpoint
CREATE UNIQUE INDEX "billing_balance_entries_invoice" ON "billing_balance_entries" USING btree ("invoice_id");