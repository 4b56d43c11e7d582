import { describe, expect, it } from "vitest";
import { LatencySketch, RELATIVE_ACCURACY, type StoredSketch } from "../../../server/dataplane/latency-sketch.ts";

/** The exact percentile by nearest rank: the sample at rank ceil(q × n). */
function exact(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Deterministic samples shaped like RPC answer times: most fast, a slow tail (log-normal-ish), a few outliers. */
function samples(n: number, seed: number): number[] {
  let x = seed;
  const random = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  return Array.from({ length: n }, () => {
    const u = random();
    if (u < 0.01) return 200 + random() * 800;
    return Math.exp(-1 + 2.5 * (random() + random() + random() - 1.5));
  });
}

const QUANTILES = [0.5, 0.9, 0.95, 0.99];

describe("latency sketches", () => {
  it("a quantile is within 1% of the exact nearest-rank percentile of the samples", () => {
    const all = samples(20_000, 7);
    const sketch = new LatencySketch();
    for (const ms of all) sketch.accept(ms);
    for (const q of QUANTILES) {
      const want = exact(all, q);
      expect(Math.abs(sketch.quantile(q) - want) / want).toBeLessThanOrEqual(RELATIVE_ACCURACY);
    }
    expect(new LatencySketch().quantile(0.99)).toBe(0);
  });

  it("two processes' sketches, stored and merged, over several time buckets: p50/p95/p99 within 2% of exact", () => {
    // Two processes each record three minutes of traffic; the minute rows are stored (JSON, as the
    // database keeps them) and summed bin by bin, as the upsert and the window's reader do.
    const minutes = [0, 1, 2].map((m) => [samples(3000, 11 + m), samples(1500 + 500 * m, 101 + m)]);
    const rows: StoredSketch[] = [];
    for (const perProcess of minutes)
      for (const recorded of perProcess) {
        const sketch = new LatencySketch();
        for (const ms of recorded) sketch.accept(ms);
        rows.push(JSON.parse(JSON.stringify(sketch.toStored())) as StoredSketch);
      }
    const window = LatencySketch.of(...rows);
    const all = minutes.flat(2);
    expect(window.count).toBe(all.length);
    for (const q of [0.5, 0.95, 0.99]) {
      const want = exact(all, q);
      expect(Math.abs(window.quantile(q) - want) / want).toBeLessThanOrEqual(0.02);
    }
    // Each minute alone too (a chart's point), both processes merged.
    minutes.forEach((perProcess, m) => {
      const point = LatencySketch.of(rows[2 * m], rows[2 * m + 1]);
      for (const q of [0.5, 0.95, 0.99]) {
        const want = exact(perProcess.flat(), q);
        expect(Math.abs(point.quantile(q) - want) / want).toBeLessThanOrEqual(0.02);
      }
    });
  });

  it("p99 of a few samples is the slowest's rank, not a bucket edge (p50 1 ms, p99 1.4 ms stays 1.4 ms)", () => {
    const sketch = new LatencySketch();
    for (let i = 0; i < 99; i++) sketch.accept(1);
    sketch.accept(1.4);
    expect(Math.abs(sketch.quantile(0.5) - 1)).toBeLessThanOrEqual(0.01);
    expect(Math.abs(sketch.quantile(0.99) - 1)).toBeLessThanOrEqual(0.01);
    expect(Math.abs(sketch.quantile(1) - 1.4)).toBeLessThanOrEqual(0.014);
  });
});
