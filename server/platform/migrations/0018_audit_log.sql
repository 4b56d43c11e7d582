CREATE TABLE "audit_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"area" text NOT NULL,
	"endpoint_id" uuid,
	"action" text NOT NULL,
	"subject" text NOT NULL,
	"subject_id" uuid,
	"detail" text,
	"reason" text,
	"changes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"user_id" uuid,
	"user_email" text,
	"user_role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_endpoint" ON "audit_log" USING btree ("account_id","area","endpoint_id","created_at");--> statement-breakpoint
INSERT INTO "audit_log" ("id", "account_id", "area", "endpoint_id", "action", "subject", "subject_id", "reason", "changes", "user_id", "user_email", "user_role", "created_at")
SELECT "id", "account_id", 'RATE_LIMITS', "endpoint_id", "action", "subject", "subject_id", "reason", "changes", "user_id", "user_email", "user_role", "created_at" FROM "rate_limit_audits";--> statement-breakpoint
INSERT INTO "audit_log" ("id", "account_id", "area", "endpoint_id", "action", "subject", "detail", "user_id", "user_email", "user_role", "created_at")
SELECT "id", "account_id", 'SECURITY', "endpoint_id", "action", "subject", "detail", "user_id", "user_email", "user_role", "created_at" FROM "security_audits";