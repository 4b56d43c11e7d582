CREATE TABLE "addon_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"subject" text NOT NULL,
	"endpoint_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "addon_installs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid,
	"addon_slug" text NOT NULL,
	"plan_slug" text NOT NULL,
	"interval" text NOT NULL,
	"coupon_code" text,
	"payment_source_id" text,
	"disabled_methods" text[] DEFAULT '{}'::text[] NOT NULL,
	"disabled_methods_on_creation" text[] DEFAULT '{}'::text[] NOT NULL,
	"current_period_start" timestamp (3) with time zone NOT NULL,
	"current_period_end" timestamp (3) with time zone NOT NULL,
	"pending_plan_slug" text,
	"deactivates_at" timestamp (3) with time zone,
	"cancelation_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "addon_events" ADD CONSTRAINT "addon_events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "addon_installs" ADD CONSTRAINT "addon_installs_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "addon_installs" ADD CONSTRAINT "addon_installs_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "addon_events_account" ON "addon_events" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "addon_installs_account" ON "addon_installs" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "addon_installs_live_on_endpoint" ON "addon_installs" USING btree ("endpoint_id","addon_slug") WHERE "addon_installs"."ended_at" is null and "addon_installs"."endpoint_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "addon_installs_live_on_account" ON "addon_installs" USING btree ("account_id","addon_slug") WHERE "addon_installs"."ended_at" is null and "addon_installs"."endpoint_id" is null;