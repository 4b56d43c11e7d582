ALTER TABLE "stream_metric_minutes" ADD COLUMN "filter_sketch" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "stream_metric_minutes" ADD COLUMN "latency_sketch" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "endpoint_metric_minutes" ADD COLUMN "latency_sketch" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_minutes" ADD COLUMN "malformed" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_minutes" ADD COLUMN "unknown_method" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Rows written before this migration kept counts over fixed buckets (dataplane/histogram.ts, removed):
-- each bucket's count goes to the sketch bin of the bucket's upper bound (the value those rows showed;
-- the open last bucket at 60 s), so old minutes still read, merged with new ones.
UPDATE "endpoint_metric_minutes" SET "latency_sketch" = (select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (select ((array[-149,-115,-69,-34,0,46,81,116,161,196,231,277,311,346,392,426,461,516,551,551])[h.i])::text k, sum(h.n) n from unnest("latency_histogram") with ordinality h(n, i) where h.n > 0 group by 1) s);--> statement-breakpoint
UPDATE "stream_metric_minutes" SET "filter_sketch" = (select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (select ((array[-149,-115,-69,-34,0,46,81,116,161,196,231,277,311,346,392,426,461,516,551,551])[h.i])::text k, sum(h.n::float8) n from jsonb_array_elements_text("filter_histogram") with ordinality h(n, i) where h.n::float8 > 0 group by 1) s), "latency_sketch" = (select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (select ((array[-149,-115,-69,-34,0,46,81,116,161,196,231,277,311,346,392,426,461,516,551,551])[h.i])::text k, sum(h.n::float8) n from jsonb_array_elements_text("latency_histogram") with ordinality h(n, i) where h.n::float8 > 0 group by 1) s);--> statement-breakpoint
ALTER TABLE "stream_metric_minutes" DROP COLUMN "filter_histogram";--> statement-breakpoint
ALTER TABLE "stream_metric_minutes" DROP COLUMN "latency_histogram";--> statement-breakpoint
ALTER TABLE "endpoint_metric_minutes" DROP COLUMN "latency_histogram";