ALTER TABLE "error_logs" ADD COLUMN "calls" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "error_logs" ADD COLUMN "failed_calls" integer DEFAULT 1 NOT NULL;