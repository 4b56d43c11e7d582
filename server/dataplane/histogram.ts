/**
 * Durations kept as counts over fixed buckets, so that per-minute rows add up and a percentile over any
 * window comes from summed counts. The stream engine (filter runs, deliveries) and the RPC proxy's meter
 * (answer times) share these bounds: 0.05 ms (a proxy's own answer) to 60 s (a slow node or destination).
 * A percentile answers the upper bound of the bucket holding its rank (p95 = "95% took at most this
 * long", accurate to one bucket).
 */
export const BUCKETS_MS = [
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  25,
  50,
  100,
  250,
  500,
  1000,
  2500,
  5000,
  10000,
  30000,
  60000,
  Number.POSITIVE_INFINITY,
];

export function bucketOf(ms: number): number {
  for (let i = 0; i < BUCKETS_MS.length; i++) if (ms <= BUCKETS_MS[i]) return i;
  return BUCKETS_MS.length - 1;
}

/** Counts of zero per bucket. */
export function emptyHistogram(): number[] {
  return new Array(BUCKETS_MS.length).fill(0);
}

/** The upper bound of the bucket that holds quantile q (0..1) of the histogram; 0 when empty. */
export function percentile(histogram: number[], q: number): number {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank) return Number.isFinite(BUCKETS_MS[i]) ? BUCKETS_MS[i] : BUCKETS_MS[BUCKETS_MS.length - 2];
  }
  return BUCKETS_MS[BUCKETS_MS.length - 2];
}

export function addHistograms(a: number[], b: number[]): number[] {
  return Array.from({ length: BUCKETS_MS.length }, (_, i) => (a[i] ?? 0) + (b[i] ?? 0));
}
