CREATE TABLE "endpoint_metric_minutes" (
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"statuses" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"refusals" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"latency_histogram" bigint[] NOT NULL,
	CONSTRAINT "endpoint_metric_minutes_endpoint_id_minute_pk" PRIMARY KEY("endpoint_id","minute")
);
--> statement-breakpoint
ALTER TABLE "error_logs" ADD COLUMN "client_ip" text;--> statement-breakpoint
ALTER TABLE "error_logs" ADD COLUMN "origin" text;--> statement-breakpoint
CREATE INDEX "endpoint_metric_minutes_minute" ON "endpoint_metric_minutes" USING btree ("minute");