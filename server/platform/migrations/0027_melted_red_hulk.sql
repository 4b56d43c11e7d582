CREATE SEQUENCE "public"."crypto_charge_address_indexes" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "crypto_charges" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"code" text NOT NULL,
	"provider" text NOT NULL,
	"invoice_id" uuid NOT NULL,
	"amount_cents" bigint NOT NULL,
	"network" text NOT NULL,
	"address_index" integer NOT NULL,
	"address" text NOT NULL,
	"amount_wei" numeric(78, 0) NOT NULL,
	"received_wei" numeric(78, 0) DEFAULT '0' NOT NULL,
	"status" text NOT NULL,
	"confirmed_block" bigint,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"confirmed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "crypto_charges" ADD CONSTRAINT "crypto_charges_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crypto_charges" ADD CONSTRAINT "crypto_charges_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "crypto_charges_code" ON "crypto_charges" USING btree ("code");--> statement-breakpoint
CREATE UNIQUE INDEX "crypto_charges_address_index" ON "crypto_charges" USING btree ("address_index");--> statement-breakpoint
CREATE INDEX "crypto_charges_account_created" ON "crypto_charges" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "crypto_charges_open_invoice" ON "crypto_charges" USING btree ("invoice_id") WHERE status in ('NEW', 'UNDERPAID', 'PENDING');--> statement-breakpoint
CREATE INDEX "crypto_charges_open" ON "crypto_charges" USING btree ("network") WHERE status in ('NEW', 'UNDERPAID', 'PENDING');