CREATE TABLE "kv_write_minutes" (
	"account_id" uuid NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"calls" bigint DEFAULT 0 NOT NULL,
	"operations" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "kv_write_minutes_account_id_minute_pk" PRIMARY KEY("account_id","minute")
);
--> statement-breakpoint
-- Per-day counts move to the day's first minute (UTC); a call is at least one operation.
INSERT INTO "kv_write_minutes" ("account_id", "minute", "calls", "operations")
SELECT "account_id", "day"::timestamp AT TIME ZONE 'UTC', "calls", GREATEST("items", "calls") FROM "kv_helper_writes";--> statement-breakpoint
DROP TABLE "kv_helper_writes" CASCADE;--> statement-breakpoint
ALTER TABLE "kv_write_minutes" ADD CONSTRAINT "kv_write_minutes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;