import { DDSketch } from "@datadog/sketches-js";

/**
 * Durations kept as DDSketches (@datadog/sketches-js): a quantile read from one is within 1% of the exact
 * value of the samples it holds, and two sketches merge by adding counts bin by bin, so per-minute rows
 * written by several processes add up in SQL and a percentile over any window comes from their sum. The
 * RPC proxy's meter (answer times) and the stream engine (filter runs, deliveries of streams and webhooks)
 * share it. Replaces the fixed buckets that made p95/p99 snap to bucket edges
 * (docs/decisions/0602-latency-sketches.md).
 */
export const RELATIVE_ACCURACY = 0.01;

/**
 * A sketch as stored (a jsonb column): the count of each bin, keyed by the bin's index under the sketch's
 * logarithmic mapping (the same for every sketch of RELATIVE_ACCURACY), only bins that hold a sample.
 */
export type StoredSketch = Record<string, number>;

/** Durations below a microsecond are counted as one: the clock says no more, and the bins stay bounded. */
const SMALLEST_MS = 0.001;

export class LatencySketch {
  private readonly sketch = new DDSketch({ relativeAccuracy: RELATIVE_ACCURACY });

  /** A sketch holding the stored sketches' samples (a window's rows, summed). */
  static of(...stored: (StoredSketch | null | undefined)[]): LatencySketch {
    const sketch = new LatencySketch();
    for (const s of stored) if (s) sketch.addStored(s);
    return sketch;
  }

  get count(): number {
    return this.sketch.count;
  }

  accept(ms: number): void {
    this.sketch.accept(Math.max(ms, SMALLEST_MS));
  }

  merge(other: LatencySketch): this {
    this.sketch.merge(other.sketch);
    return this;
  }

  /** Adds a stored sketch's bins (what the SQL upsert does with two rows). */
  addStored(stored: StoredSketch): this {
    for (const [key, n] of Object.entries(stored)) {
      const count = Number(n);
      if (!(count > 0)) continue;
      this.sketch.store.add(Number(key), count);
      this.sketch.count += count;
    }
    return this;
  }

  /**
   * The value at quantile q (0..1) by nearest rank (the sample at rank ceil(q × count): "q of them took at
   * most this long"), within RELATIVE_ACCURACY of that sample; 0 when empty. The sketch's own
   * getValueAtQuantile reads rank q × (count − 1), which calls the third of four samples their p99.
   */
  quantile(q: number): number {
    const count = this.sketch.count;
    if (count === 0) return 0;
    const rank = Math.min(count - 1, Math.max(0, Math.ceil(q * count) - 1));
    return this.sketch.mapping.value(this.sketch.store.keyAtRank(rank));
  }

  toStored(): StoredSketch {
    const { bins, offset } = this.sketch.store;
    const stored: StoredSketch = {};
    for (let i = 0; i < bins.length; i++) if (bins[i] > 0) stored[i + offset] = bins[i];
    return stored;
  }
}

/**
 * SQL adding two stored sketches bin by bin (an upsert's stored and excluded rows): the merge, in the
 * database, so writers in several processes add to one minute row.
 */
export function sumStoredSketchesSql(stored: string, added: string): string {
  return `(select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (select k, sum(v::float8) n from (select * from jsonb_each_text(${stored}) union all select * from jsonb_each_text(${added})) e(k, v) group by k) s)`;
}
