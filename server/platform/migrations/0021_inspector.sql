CREATE TABLE "inspected_requests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"inspection_url_id" uuid NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"method" text NOT NULL,
	"headers" jsonb NOT NULL,
	"body" text NOT NULL,
	"body_truncated" boolean NOT NULL,
	"size" integer NOT NULL,
	"signature" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inspection_urls" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"name" text NOT NULL,
	"token" text NOT NULL,
	"answer_status" integer DEFAULT 200 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inspection_urls_token_unique" UNIQUE("token")
);
--> statement-breakpoint
ALTER TABLE "inspected_requests" ADD CONSTRAINT "inspected_requests_inspection_url_id_inspection_urls_id_fk" FOREIGN KEY ("inspection_url_id") REFERENCES "public"."inspection_urls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inspection_urls" ADD CONSTRAINT "inspection_urls_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "inspected_requests_url_received" ON "inspected_requests" USING btree ("inspection_url_id","received_at");--> statement-breakpoint
CREATE INDEX "inspection_urls_account_created" ON "inspection_urls" USING btree ("account_id","created_at");