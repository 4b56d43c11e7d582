import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LatencySketch } from "../../server/dataplane/latency-sketch.ts";
import type { TestUser } from "../support/api.ts";
import { NETWORK, type StreamsTestApp, startStreamsAppAsOwner } from "./streams-harness.ts";

// Metrics over long windows: functions, streams and webhooks choose one step from the window's length
// (platform/time-buckets.ts) and sum their minutes per point in PostgreSQL: counts and GB-seconds add,
// averages are the point's total over its runs, latency sketches merge bin by bin, cumulative series
// carry over empty points; a series never has more than 200 points.

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ engine: false }));
});
afterAll(async () => {
  await t?.close();
});

const HOUR = 3600;
const at = (iso: string) => new Date(iso).toISOString();
type Point = { timestamp: string; value: number };
const valueAt = (points: Point[], iso: string) => points.find((p) => p.timestamp === at(iso))?.value;
const sumOf = (points: Point[]) => points.reduce((a, p) => a + p.value, 0);

async function accountOf(table: "functions" | "streams", id: string): Promise<string> {
  const result = await t.db.execute<{ account_id: string }>(
    sql`select account_id from ${sql.raw(table)} where id = ${id}`,
  );
  return result.rows[0].account_id;
}

describe("metrics over long windows", () => {
  it("functions: a 19-day window is per 6 hours, sums per point, weights the average by runs, carries the cumulative", async () => {
    const { createFunction } = await owner.client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      { input: { name: "old runs", code: "function main() { return 1; }" } },
    );
    const id = createFunction.id;
    const accountId = await accountOf("functions", id);
    // minute, runs, failed runs, milliseconds, result bytes (128 MB each run, so MB-ms = 128 × ms)
    const minutes: [string, number, number, number, number][] = [
      ["2026-10-31T23:59:00Z", 100, 0, 100, 0], // before the window
      ["2026-11-02T01:10:00Z", 2, 1, 30, 100], // 15 ms a run
      ["2026-11-02T05:59:00Z", 8, 0, 80, 50], // 10 ms a run; the same 6-hour point
      ["2026-11-10T13:00:00Z", 1, 0, 5, 10],
      ["2026-11-20T00:00:00Z", 100, 0, 100, 0], // the window's end: not in it
    ];
    for (const [minute, runs, errors, ms, bytes] of minutes)
      await t.db.execute(sql`insert into function_usage_minutes
        (account_id, function_id, minute, executions, errors, duration_ms, response_bytes, mb_ms)
        values (${accountId}, ${id}, ${minute}::timestamptz, ${runs}, ${errors}, ${ms}, ${bytes}, ${128 * ms})`);

    const metrics = async (startDate: string, endDate: string) =>
      (
        await owner.client.gqlOk<{
          functionMetrics: {
            from: string;
            to: string;
            stepSeconds: number;
            execution: { total: number; datapoints: Point[]; cumulative: Point[] };
            error: { total: number; datapoints: Point[] };
            size: { total: number; datapoints: Point[] };
            usage: { total: number; datapoints: Point[]; cumulative: Point[] };
            duration: { total: number; average: number; datapoints: Point[] };
          };
        }>(
          `query($id: ID!, $start: DateTime!, $end: DateTime) { functionMetrics(id: $id, startDate: $start, endDate: $end) {
            from to stepSeconds
            execution { total datapoints { timestamp value } cumulative { timestamp value } }
            error { total datapoints { timestamp value } } size { total datapoints { timestamp value } }
            usage { total datapoints { timestamp value } cumulative { timestamp value } }
            duration { total average datapoints { timestamp value } } } }`,
          { id, start: startDate, end: endDate },
        )
      ).functionMetrics;

    const m = await metrics("2026-11-01T00:00:00Z", "2026-11-20T00:00:00Z");
    expect(m.stepSeconds).toBe(6 * HOUR);
    // Dense: every 6-hour point of the 19 days, zero where nothing ran.
    expect(m.execution.datapoints).toHaveLength(19 * 4);
    expect(m.execution.datapoints[0].timestamp).toBe(at("2026-11-01T00:00:00Z"));
    expect(m.execution.datapoints.at(-1)?.timestamp).toBe(at("2026-11-19T18:00:00Z"));
    expect(valueAt(m.execution.datapoints, "2026-11-02T00:00:00Z")).toBe(10);
    expect(valueAt(m.execution.datapoints, "2026-11-10T12:00:00Z")).toBe(1);
    expect(valueAt(m.execution.datapoints, "2026-11-05T00:00:00Z")).toBe(0);
    expect(m.execution.total).toBe(11);
    expect(sumOf(m.execution.datapoints)).toBe(11);
    expect(sumOf(m.error.datapoints)).toBe(1);
    expect(valueAt(m.size.datapoints, "2026-11-02T00:00:00Z")).toBe(150);
    expect(m.usage.total).toBeCloseTo((128 * 115) / 1024 / 1000, 12);
    expect(valueAt(m.usage.datapoints, "2026-11-02T00:00:00Z")).toBeCloseTo((128 * 110) / 1024 / 1000, 12);
    // The point's milliseconds over its runs: 110 / 10 = 11 ms (the minutes' averages would give 12.5).
    expect(m.duration.datapoints).toEqual([
      { timestamp: at("2026-11-02T00:00:00Z"), value: 11 },
      { timestamp: at("2026-11-10T12:00:00Z"), value: 5 },
    ]);
    expect(m.duration.average).toBeCloseTo(115 / 11, 12);
    // Cumulative: carried over the empty points, the window's total at its end.
    expect(valueAt(m.execution.cumulative, "2026-11-05T00:00:00Z")).toBe(10);
    expect(m.execution.cumulative.at(-1)?.value).toBe(11);
    expect(m.usage.cumulative.at(-1)?.value).toBeCloseTo(m.usage.total, 12);

    // An hour is per minute; 7 days per hour; a longer range is its last 31 days, per 6 hours.
    const hour = await metrics("2026-11-02T01:00:00Z", "2026-11-02T02:00:00Z");
    expect([hour.stepSeconds, hour.execution.datapoints.length]).toEqual([60, 60]);
    expect(valueAt(hour.execution.datapoints, "2026-11-02T01:10:00Z")).toBe(2);
    const week = await metrics("2026-11-01T00:00:00Z", "2026-11-08T00:00:00Z");
    expect([week.stepSeconds, week.execution.datapoints.length]).toEqual([HOUR, 168]);
    expect(valueAt(week.execution.datapoints, "2026-11-02T01:00:00Z")).toBe(2);
    expect(valueAt(week.execution.datapoints, "2026-11-02T05:00:00Z")).toBe(8);
    const long = await metrics("2026-01-01T00:00:00Z", "2026-11-20T00:00:00Z");
    expect(long.from).toBe(at("2026-10-20T00:00:00Z"));
    expect(long.stepSeconds).toBe(6 * HOUR);
    expect(long.execution.datapoints).toHaveLength(31 * 4);
    expect(long.execution.total).toBe(111);
    // A window with nothing in it has no points (the charts say so) rather than zeros.
    const empty = await metrics("2026-09-01T00:00:00Z", "2026-09-08T00:00:00Z");
    expect([empty.stepSeconds, empty.execution.datapoints.length, empty.execution.cumulative.length]).toEqual([
      HOUR,
      0,
      0,
    ]);
  });

  it("streams and webhooks: sketches merge per point, all time starts at the first minute, at most 200 points", async () => {
    const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "old deliveries",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: "http://127.0.0.1:9/none", maxRetry: 3, retryIntervalSec: 0 },
          startRange: 1,
        },
      },
    );
    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      { input: { name: "old hooks", network: NETWORK, url: "http://127.0.0.1:9/none" } },
    );
    const sketchOf = (samples: number[]) => {
      const sketch = new LatencySketch();
      for (const ms of samples) sketch.accept(ms);
      return sketch.toStored();
    };
    const latencyA = [0.25, 0.25, 0.25];
    const latencyB = [100];
    // minute, blocks, billable bytes, filter runs, filter ms, latency samples
    const minutes: [string, number, number, number, number, number[]][] = [
      ["2026-11-03T10:05:00Z", 3, 1000, 2, 10, latencyA], // 5 ms a filter run
      ["2026-11-03T10:40:00Z", 5, 500, 8, 8, latencyB], // 1 ms a run; the same hour
      ["2026-11-07T23:00:00Z", 1, 10, 0, 0, []],
    ];
    for (const [product, id] of [
      ["STREAM", createStream.id],
      ["WEBHOOK", createWebhook.id],
    ]) {
      const accountId = await accountOf("streams", id);
      for (const [minute, blocks, bytes, runs, ms, latency] of minutes)
        await t.db.execute(sql`insert into stream_metric_minutes
          (account_id, stream_id, product, minute, blocks, bytes_total, bytes_billable, requests, delivered,
           filter_runs, filter_ms_total, filter_sketch, latency_sketch)
          values (${accountId}, ${id}, ${product}, ${minute}::timestamptz, ${blocks}, ${bytes}, ${bytes}, 1, 1,
           ${runs}, ${ms}, ${JSON.stringify(sketchOf(new Array(runs).fill(1)))}::jsonb, ${JSON.stringify(sketchOf(latency))}::jsonb)`);
    }

    type StreamMetrics = {
      from: string;
      to: string;
      stepSeconds: number;
      datasets: { total: number; datapoints: Point[] };
      bytes: { billableTotal: number; billableCumulative: Point[] };
      filter: { durationAverage: number; durationDatapoints: Point[] };
      latency: { p99: number; points: (Point & { name: string })[] };
    };
    const streamMetrics = async (variables: Record<string, string>) =>
      (
        await owner.client.gqlOk<{ streamMetrics: StreamMetrics }>(
          `query($id: ID!, $start: DateTime, $end: DateTime) { streamMetrics(id: $id, startDate: $start, endDate: $end) {
            from to stepSeconds datasets { total datapoints { timestamp value } }
            bytes { billableTotal billableCumulative { timestamp value } }
            filter { durationAverage durationDatapoints { timestamp value } }
            latency { p99 points { name timestamp value } } } }`,
          { id: createStream.id, ...variables },
        )
      ).streamMetrics;

    // 8 days: per hour, 192 points.
    const s = await streamMetrics({ start: "2026-11-01T00:00:00Z", end: "2026-11-09T00:00:00Z" });
    expect(s.stepSeconds).toBe(HOUR);
    expect(s.datasets.datapoints).toHaveLength(192);
    expect(valueAt(s.datasets.datapoints, "2026-11-03T10:00:00Z")).toBe(8);
    expect(sumOf(s.datasets.datapoints)).toBe(9);
    expect(valueAt(s.bytes.billableCumulative, "2026-11-05T00:00:00Z")).toBe(1500);
    expect(s.bytes.billableCumulative.at(-1)?.value).toBe(1510);
    // 18 ms over 10 runs, not (5 + 1) / 2.
    expect(s.filter.durationDatapoints).toEqual([{ timestamp: at("2026-11-03T10:00:00Z"), value: 1.8 }]);
    expect(s.filter.durationAverage).toBeCloseTo(1.8, 12);
    // The hour's latency is of the two minutes' sketches merged: 3 fast deliveries and 1 slow.
    const merged = LatencySketch.of(sketchOf(latencyA), sketchOf(latencyB));
    const hourLatency = s.latency.points.filter((p) => p.timestamp === at("2026-11-03T10:00:00Z"));
    expect(hourLatency.map((p) => [p.name, p.value])).toEqual([
      ["p50", merged.quantile(0.5)],
      ["p90", merged.quantile(0.9)],
      ["p99", merged.quantile(0.99)],
    ]);
    expect(Math.abs(merged.quantile(0.5) - 0.25)).toBeLessThanOrEqual(0.25 * 0.01);
    expect(Math.abs(merged.quantile(0.99) - 100)).toBeLessThanOrEqual(100 * 0.01);

    // All time: from the first recorded minute to now, at most 200 points.
    const before = Date.now();
    const all = await streamMetrics({});
    expect(all.from).toBe(at("2026-11-03T10:05:00Z"));
    expect(Date.parse(all.to)).toBeGreaterThanOrEqual(before);
    expect(all.datasets.datapoints.length).toBeLessThanOrEqual(200);
    expect(all.datasets.total).toBe(9);
    expect(sumOf(all.datasets.datapoints)).toBe(9);
    const spanDays = (Date.parse(all.to) - Date.parse(all.from)) / 86_400_000;
    expect(all.stepSeconds).toBe(spanDays <= 8 ? HOUR : spanDays <= 49 ? 6 * HOUR : spanDays <= 199 ? 86_400 : 604_800);

    // Webhooks read the same rows with the same step.
    const { webhookMetrics: w } = await owner.client.gqlOk<{
      webhookMetrics: {
        stepSeconds: number;
        processed: number;
        datapoints: { timestamp: string; processed: number; bytes: number }[];
      };
    }>(
      `query($id: ID!, $start: DateTime, $end: DateTime) { webhookMetrics(id: $id, startDate: $start, endDate: $end) {
        stepSeconds processed datapoints { timestamp processed bytes } } }`,
      { id: createWebhook.id, start: "2026-11-01T00:00:00Z", end: "2026-11-09T00:00:00Z" },
    );
    expect(w.stepSeconds).toBe(HOUR);
    expect(w.datapoints).toHaveLength(192);
    expect(w.datapoints.find((p) => p.timestamp === at("2026-11-03T10:00:00Z"))).toMatchObject({
      processed: 8,
      bytes: 1500,
    });
    expect(w.processed).toBe(9);
  });

  it("migration 0019 turns rows of fixed-bucket counts into sketches that show what those rows showed", async () => {
    const file = path.resolve(
      import.meta.dirname,
      "../../server/platform/migrations/0019_latency_sketches_usage_counts.sql",
    );
    const updates = readFileSync(file, "utf8")
      .split("--> statement-breakpoint")
      .filter((statement) => /^\s*(--[^\n]*\n\s*)*UPDATE/.test(statement));
    expect(updates).toHaveLength(2);
    const old = (counts: Record<number, number>) => Array.from({ length: 20 }, (_, i) => counts[i] ?? 0);
    const client = await t.db.$client.connect();
    try {
      // The rows as the fixed buckets stored them, in a transaction rolled back after: the old columns come back for it.
      await client.query("begin");
      await client.query("alter table endpoint_metric_minutes add column latency_histogram bigint[]");
      await client.query(
        "alter table stream_metric_minutes add column filter_histogram jsonb, add column latency_histogram jsonb",
      );
      const accountId = "00000000-0000-4000-8000-000000000001";
      const id = "00000000-0000-4000-8000-000000000002";
      // 3 answers in the 0.1–0.25 ms bucket, 1 in 50–100 ms, 1 past 60 s.
      await client.query(
        `insert into endpoint_metric_minutes (account_id, endpoint_id, minute, requests, latency_histogram)
         values ($1, $2, '2026-11-01T00:00:00Z', 5, $3)`,
        [accountId, id, old({ 2: 3, 10: 1, 19: 1 })],
      );
      await client.query(
        `insert into stream_metric_minutes (account_id, stream_id, product, minute, filter_histogram, latency_histogram)
         values ($1, $2, 'STREAM', '2026-11-01T00:00:00Z', $3, $4)`,
        [accountId, id, JSON.stringify(old({ 4: 2 })), JSON.stringify(old({ 2: 3, 10: 1 }))],
      );
      for (const update of updates) await client.query(update);
      const endpoint = LatencySketch.of(
        (await client.query("select latency_sketch from endpoint_metric_minutes where endpoint_id = $1", [id])).rows[0]
          .latency_sketch,
      );
      const stream = (
        await client.query("select filter_sketch, latency_sketch from stream_metric_minutes where stream_id = $1", [id])
      ).rows[0];
      const near = (shown: number, want: number) => expect(Math.abs(shown - want)).toBeLessThanOrEqual(want * 0.01);
      expect(endpoint.count).toBe(5);
      near(endpoint.quantile(0.5), 0.25);
      near(endpoint.quantile(0.8), 100);
      near(endpoint.quantile(1), 60_000);
      const filter = LatencySketch.of(stream.filter_sketch);
      expect(filter.count).toBe(2);
      near(filter.quantile(0.5), 1);
      const latency = LatencySketch.of(stream.latency_sketch);
      near(latency.quantile(0.5), 0.25);
      near(latency.quantile(0.99), 100);
    } finally {
      await client.query("rollback");
      client.release();
    }
  });
});
