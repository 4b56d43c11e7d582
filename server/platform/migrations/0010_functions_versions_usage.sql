CREATE TABLE "function_usage_minutes" (
	"account_id" uuid NOT NULL,
	"function_id" uuid NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"executions" bigint DEFAULT 0 NOT NULL,
	"errors" bigint DEFAULT 0 NOT NULL,
	"duration_ms" double precision DEFAULT 0 NOT NULL,
	"response_bytes" bigint DEFAULT 0 NOT NULL,
	"mb_ms" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "function_usage_minutes_function_id_minute_pk" PRIMARY KEY("function_id","minute")
);
--> statement-breakpoint
CREATE TABLE "function_versions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"function_id" uuid NOT NULL,
	"account_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"code" text NOT NULL,
	"timeout_sec" integer NOT NULL,
	"memory_mb" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "function_versions_version_key" UNIQUE("function_id","version")
);
--> statement-breakpoint
ALTER TABLE "function_activations" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "function_activations" ADD COLUMN "memory_mb" integer DEFAULT 128 NOT NULL;--> statement-breakpoint
ALTER TABLE "function_activations" ADD COLUMN "memory_used_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "function_activations" ADD COLUMN "billable_gb_seconds" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "function_activations" ADD COLUMN "user_data" jsonb;--> statement-breakpoint
ALTER TABLE "function_activations" ADD COLUMN "result_json" text;--> statement-breakpoint
ALTER TABLE "functions" ADD COLUMN "memory_mb" integer DEFAULT 128 NOT NULL;--> statement-breakpoint
ALTER TABLE "functions" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "function_versions" ADD CONSTRAINT "function_versions_function_id_functions_id_fk" FOREIGN KEY ("function_id") REFERENCES "public"."functions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "function_versions" ADD CONSTRAINT "function_versions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "function_usage_minutes_account_minute" ON "function_usage_minutes" USING btree ("account_id","minute");