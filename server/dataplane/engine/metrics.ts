import type pg from "pg";
import { LatencySketch, sumStoredSketchesSql } from "../latency-sketch.ts";

/**
 * Per-stream metrics, aggregated per minute in memory and flushed in batches (one multi-row upsert).
 *
 * Percentiles come from sketches (../latency-sketch.ts): each minute row keeps its sketches' bins.
 *
 * Definitions:
 * - blocks: blocks processed (read and filtered), `datasets` in the API;
 * - bytesTotal: bytes of dataset JSON read; bytesBillable: bytes of payload delivered (after the filter)
 *   — streams bill these;
 * - requests: delivery requests made (each attempt); delivered: acknowledged deliveries;
 * - credits: webhooks bill {@link WEBHOOK_CREDITS_PER_DELIVERY} per delivered payload;
 * - errors: failed attempts (delivery, filter or chain read); retries: attempts after the first;
 * - filter: runs, total duration, runs under {@link FILTER_THRESHOLD_MS}, duration sketch;
 * - latency: from the start of reading a batch to the destination's acknowledgement (or the filter's
 *   skip), sketch.
 */
export const FILTER_THRESHOLD_MS = 50;
export const WEBHOOK_CREDITS_PER_DELIVERY = 1;

export interface MetricSample {
  blocks?: number;
  bytesTotal?: number;
  bytesBillable?: number;
  requests?: number;
  delivered?: number;
  credits?: number;
  errors?: number;
  retries?: number;
  filterMs?: number;
  latencyMs?: number;
}

interface Cell {
  accountId: string;
  streamId: string;
  product: string;
  minute: number;
  blocks: number;
  bytesTotal: number;
  bytesBillable: number;
  requests: number;
  delivered: number;
  credits: number;
  errors: number;
  retries: number;
  filterRuns: number;
  filterSubThreshold: number;
  filterMsTotal: number;
  filterSketch: LatencySketch;
  latencySketch: LatencySketch;
}

const COUNTERS = [
  "blocks",
  "bytesTotal",
  "bytesBillable",
  "requests",
  "delivered",
  "credits",
  "errors",
  "retries",
] as const;

export class MetricsBuffer {
  private cells = new Map<string, Cell>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: pg.Pool,
    private readonly onError: (e: unknown) => void,
    flushMs = 5000,
  ) {
    if (flushMs > 0) {
      this.timer = setInterval(() => void this.flush(), flushMs);
      this.timer.unref();
    }
  }

  add(stream: { id: string; accountId: string; product: string }, sample: MetricSample, at = Date.now()): void {
    const minute = Math.floor(at / 60_000) * 60_000;
    const key = `${stream.id}|${minute}`;
    let cell = this.cells.get(key);
    if (!cell) {
      cell = {
        accountId: stream.accountId,
        streamId: stream.id,
        product: stream.product,
        minute,
        blocks: 0,
        bytesTotal: 0,
        bytesBillable: 0,
        requests: 0,
        delivered: 0,
        credits: 0,
        errors: 0,
        retries: 0,
        filterRuns: 0,
        filterSubThreshold: 0,
        filterMsTotal: 0,
        filterSketch: new LatencySketch(),
        latencySketch: new LatencySketch(),
      };
      this.cells.set(key, cell);
    }
    for (const k of COUNTERS) cell[k] += sample[k] ?? 0;
    if (sample.filterMs !== undefined) {
      cell.filterRuns += 1;
      cell.filterMsTotal += sample.filterMs;
      if (sample.filterMs < FILTER_THRESHOLD_MS) cell.filterSubThreshold += 1;
      cell.filterSketch.accept(sample.filterMs);
    }
    if (sample.latencyMs !== undefined) cell.latencySketch.accept(sample.latencyMs);
  }

  /** Writes what has gathered; calls are serialised so rows are never added twice. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushNow()).catch(this.onError);
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  private async flushNow(): Promise<void> {
    if (this.cells.size === 0) return;
    const cells = [...this.cells.values()];
    this.cells = new Map();
    const cols = 17;
    const values: unknown[] = [];
    const rows = cells.map((c, i) => {
      values.push(
        c.accountId,
        c.streamId,
        c.product,
        new Date(c.minute),
        c.blocks,
        c.bytesTotal,
        c.bytesBillable,
        c.requests,
        c.delivered,
        c.credits,
        c.errors,
        c.retries,
        c.filterRuns,
        c.filterSubThreshold,
        c.filterMsTotal,
        JSON.stringify(c.filterSketch.toStored()),
        JSON.stringify(c.latencySketch.toStored()),
      );
      return `(${Array.from({ length: cols }, (_, j) => `$${i * cols + j + 1}`).join(",")})`;
    });
    const add = (c: string) => `${c} = m.${c} + excluded.${c}`;
    const addSketch = (c: string) => `${c} = ${sumStoredSketchesSql(`m.${c}`, `excluded.${c}`)}`;
    await this.pool.query(
      `insert into stream_metric_minutes as m (account_id, stream_id, product, minute, blocks, bytes_total, bytes_billable,
         requests, delivered, credits, errors, retries, filter_runs, filter_sub_threshold, filter_ms_total, filter_sketch, latency_sketch)
       values ${rows.join(",")}
       on conflict (stream_id, minute) do update set
         ${["blocks", "bytes_total", "bytes_billable", "requests", "delivered", "credits", "errors", "retries", "filter_runs", "filter_sub_threshold", "filter_ms_total"].map(add).join(", ")},
         ${addSketch("filter_sketch")}, ${addSketch("latency_sketch")}`,
      values,
    );
  }
}
