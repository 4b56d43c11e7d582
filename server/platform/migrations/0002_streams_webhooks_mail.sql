CREATE TABLE "mail_outbox" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"to" text NOT NULL,
	"subject" text NOT NULL,
	"body" text NOT NULL,
	"sent_at" timestamp with time zone,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_block_hashes" (
	"stream_id" uuid NOT NULL,
	"block_number" bigint NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "stream_block_hashes_stream_id_block_number_pk" PRIMARY KEY("stream_id","block_number")
);
--> statement-breakpoint
CREATE TABLE "stream_checkpoints" (
	"stream_id" uuid PRIMARY KEY NOT NULL,
	"next_block" bigint NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"stream_id" uuid NOT NULL,
	"start_block" bigint NOT NULL,
	"end_block" bigint NOT NULL,
	"is_reorg" boolean DEFAULT false NOT NULL,
	"sent" boolean DEFAULT true NOT NULL,
	"bytes" bigint DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"delivered_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_leases" (
	"stream_id" uuid PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"stream_id" uuid NOT NULL,
	"level" text NOT NULL,
	"message" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_metric_minutes" (
	"account_id" uuid NOT NULL,
	"stream_id" uuid NOT NULL,
	"product" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"blocks" bigint DEFAULT 0 NOT NULL,
	"bytes_total" bigint DEFAULT 0 NOT NULL,
	"bytes_billable" bigint DEFAULT 0 NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"delivered" bigint DEFAULT 0 NOT NULL,
	"credits" bigint DEFAULT 0 NOT NULL,
	"errors" bigint DEFAULT 0 NOT NULL,
	"retries" bigint DEFAULT 0 NOT NULL,
	"filter_runs" bigint DEFAULT 0 NOT NULL,
	"filter_sub_threshold" bigint DEFAULT 0 NOT NULL,
	"filter_ms_total" double precision DEFAULT 0 NOT NULL,
	"filter_histogram" jsonb NOT NULL,
	"latency_histogram" jsonb NOT NULL,
	CONSTRAINT "stream_metric_minutes_stream_id_minute_pk" PRIMARY KEY("stream_id","minute")
);
--> statement-breakpoint
CREATE TABLE "streams" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"product" text DEFAULT 'STREAM' NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'PAUSED' NOT NULL,
	"status_reason" text,
	"network" text NOT NULL,
	"dataset" text NOT NULL,
	"dataset_batch_size" integer DEFAULT 1 NOT NULL,
	"elastic_batch_enabled" boolean DEFAULT true NOT NULL,
	"include_stream_metadata" text DEFAULT 'NONE' NOT NULL,
	"destination" text NOT NULL,
	"destination_attributes" jsonb NOT NULL,
	"destination_secrets" text,
	"start_range" bigint NOT NULL,
	"end_range" bigint,
	"filter_function" text,
	"filter_version" text DEFAULT 'V5' NOT NULL,
	"fix_block_reorgs" boolean DEFAULT false NOT NULL,
	"keep_distance_from_tip" integer DEFAULT 0 NOT NULL,
	"notification_email" text,
	"sequence" integer DEFAULT 0 NOT NULL,
	"region" text DEFAULT 'USA_EAST' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "stream_block_hashes" ADD CONSTRAINT "stream_block_hashes_stream_id_streams_id_fk" FOREIGN KEY ("stream_id") REFERENCES "public"."streams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stream_checkpoints" ADD CONSTRAINT "stream_checkpoints_stream_id_streams_id_fk" FOREIGN KEY ("stream_id") REFERENCES "public"."streams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stream_deliveries" ADD CONSTRAINT "stream_deliveries_stream_id_streams_id_fk" FOREIGN KEY ("stream_id") REFERENCES "public"."streams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stream_leases" ADD CONSTRAINT "stream_leases_stream_id_streams_id_fk" FOREIGN KEY ("stream_id") REFERENCES "public"."streams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stream_logs" ADD CONSTRAINT "stream_logs_stream_id_streams_id_fk" FOREIGN KEY ("stream_id") REFERENCES "public"."streams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "streams" ADD CONSTRAINT "streams_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mail_outbox_account_created" ON "mail_outbox" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "stream_deliveries_stream" ON "stream_deliveries" USING btree ("stream_id","id");--> statement-breakpoint
CREATE INDEX "stream_logs_stream" ON "stream_logs" USING btree ("stream_id","id");--> statement-breakpoint
CREATE INDEX "stream_metric_minutes_account" ON "stream_metric_minutes" USING btree ("account_id","minute");--> statement-breakpoint
CREATE INDEX "streams_account_product_created" ON "streams" USING btree ("account_id","product","created_at");--> statement-breakpoint
CREATE INDEX "streams_active" ON "streams" USING btree ("status") WHERE "streams"."status" = 'ACTIVE';