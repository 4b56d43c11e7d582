CREATE TABLE "stream_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"stream_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"start_block" bigint NOT NULL,
	"end_block" bigint NOT NULL,
	"batches" integer DEFAULT 1 NOT NULL,
	"attempt" integer NOT NULL,
	"outcome" text NOT NULL,
	"http_status" integer,
	"answer" text NOT NULL,
	"latency_ms" double precision NOT NULL,
	"bytes" bigint NOT NULL,
	"preview" text,
	"is_reorg" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "delivery_history_days" integer DEFAULT 7 NOT NULL;--> statement-breakpoint
ALTER TABLE "streams" ADD COLUMN "failed_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "stream_deliveries" ADD CONSTRAINT "stream_deliveries_stream_id_streams_id_fk" FOREIGN KEY ("stream_id") REFERENCES "public"."streams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "stream_deliveries_stream" ON "stream_deliveries" USING btree ("stream_id","id");--> statement-breakpoint
CREATE INDEX "stream_deliveries_created" ON "stream_deliveries" USING btree ("created_at");