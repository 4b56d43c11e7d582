CREATE TABLE "rate_limit_audits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"action" text NOT NULL,
	"reason" text NOT NULL,
	"user_id" uuid,
	"user_email" text,
	"user_role" text NOT NULL,
	"changes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limit_overrides" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"bucket" text NOT NULL,
	"rate_limit" integer,
	"reason" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limiter_rates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"rate_limiter_id" uuid NOT NULL,
	"rate" integer NOT NULL,
	"source" text DEFAULT 'USER' NOT NULL,
	"status" text DEFAULT 'ENABLED' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limiters" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"interval" text NOT NULL,
	"methods" text[] NOT NULL,
	"limit_by_ip" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_minutes" (
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"method" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"credits" bigint DEFAULT 0 NOT NULL,
	"archive_requests" bigint DEFAULT 0 NOT NULL,
	"refused" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_minutes_endpoint_id_minute_method_pk" PRIMARY KEY("endpoint_id","minute","method")
);
--> statement-breakpoint
CREATE TABLE "error_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"request_id" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"method" text NOT NULL,
	"http_method" text NOT NULL,
	"status" integer NOT NULL,
	"error_code" integer,
	"error_kind" text NOT NULL,
	"message" text,
	"url" text NOT NULL,
	"network" text NOT NULL,
	"transport" text NOT NULL,
	"request_body" text,
	"response_body" text
);
--> statement-breakpoint
ALTER TABLE "rate_limit_audits" ADD CONSTRAINT "rate_limit_audits_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limit_audits" ADD CONSTRAINT "rate_limit_audits_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limit_overrides" ADD CONSTRAINT "rate_limit_overrides_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limit_overrides" ADD CONSTRAINT "rate_limit_overrides_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limiter_rates" ADD CONSTRAINT "rate_limiter_rates_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limiter_rates" ADD CONSTRAINT "rate_limiter_rates_rate_limiter_id_rate_limiters_id_fk" FOREIGN KEY ("rate_limiter_id") REFERENCES "public"."rate_limiters"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limiters" ADD CONSTRAINT "rate_limiters_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_limiters" ADD CONSTRAINT "rate_limiters_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rate_limit_audits_endpoint" ON "rate_limit_audits" USING btree ("account_id","endpoint_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "rate_limit_overrides_endpoint_kind_bucket" ON "rate_limit_overrides" USING btree ("endpoint_id","kind","bucket");--> statement-breakpoint
CREATE INDEX "rate_limiter_rates_limiter" ON "rate_limiter_rates" USING btree ("rate_limiter_id");--> statement-breakpoint
CREATE INDEX "rate_limiters_account_endpoint" ON "rate_limiters" USING btree ("account_id","endpoint_id");--> statement-breakpoint
CREATE INDEX "usage_minutes_account_minute" ON "usage_minutes" USING btree ("account_id","minute");--> statement-breakpoint
CREATE INDEX "error_logs_endpoint_at" ON "error_logs" USING btree ("account_id","endpoint_id","at","id");--> statement-breakpoint
CREATE INDEX "error_logs_request" ON "error_logs" USING btree ("endpoint_id","request_id");--> statement-breakpoint
CREATE INDEX "error_logs_at" ON "error_logs" USING btree ("at");