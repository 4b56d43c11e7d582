import { LatencySketch, type StoredSketch } from "../../dataplane/latency-sketch.ts";
import type { Db } from "../../platform/db/index.ts";
import { stepFor } from "../../platform/time-buckets.ts";
import { endpointByKey } from "../endpoints/service.ts";
import * as store from "./store.ts";

export type MetricsRange = "HOUR" | "DAY" | "WEEK" | "MONTH";

/** Each range's length in seconds; the last point is the one now falls in. */
const RANGE_SECONDS: Record<MetricsRange, number> = {
  HOUR: 3600,
  DAY: 86_400,
  WEEK: 7 * 86_400,
  MONTH: 30 * 86_400,
};

/**
 * Each range: how many points and how wide (seconds), the step being the one every metric's window of
 * that length has (platform/time-buckets.ts): a minute, 15 minutes, an hour, 6 hours.
 */
export const METRICS_RANGES = Object.fromEntries(
  Object.entries(RANGE_SECONDS).map(([range, seconds]) => {
    const stepSeconds = stepFor(new Date(0), new Date(seconds * 1000));
    return [range, { points: seconds / stepSeconds, stepSeconds }];
  }),
) as Record<MetricsRange, { points: number; stepSeconds: number }>;

/** Endpoint metric minutes are kept for the longest range, and a day more. */
export const METRICS_RETENTION_DAYS = 31;

/** Deletes endpoint metric minutes past METRICS_RETENTION_DAYS (usage minutes, which bill, are kept). */
export async function pruneEndpointMetrics(db: Db, now = new Date()) {
  return store.pruneEndpointMinutesBefore(db, new Date(now.getTime() - METRICS_RETENTION_DAYS * 86_400_000));
}

/** Methods charted by name; the others are summed as "other" (as the usage screen does). */
const METHOD_SERIES = 10;
const QUANTILES = [
  ["p50", 0.5],
  ["p95", 0.95],
  ["p99", 0.99],
] as const;

/** The points of a range ending at `now`: aligned to multiples of the step since the epoch (UTC). */
export function metricsWindow(range: MetricsRange, now: Date) {
  const { points, stepSeconds } = METRICS_RANGES[range];
  const step = stepSeconds * 1000;
  const last = Math.floor(now.getTime() / step) * step;
  const start = last - (points - 1) * step;
  return { start: new Date(start), end: new Date(last + step), stepSeconds, times: times(start, last, step) };
}

function times(first: number, last: number, step: number): number[] {
  const out: number[] = [];
  for (let t = first; t <= last; t += step) out.push(t);
  return out;
}

type Point = { name: string; timestamp: Date; value: number };

/** One point per name and time, zero where nothing was counted, so each series spans the whole range. */
function densePoints(names: string[], at: number[], countOf: (name: string, time: number) => number): Point[] {
  return names.flatMap((name) => at.map((time) => ({ name, timestamp: new Date(time), value: countOf(name, time) })));
}

function addTo<K>(map: Map<K, number>, key: K, n: number) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/**
 * An endpoint's metrics over a range ending now: requests by method, HTTP status and refusal reason,
 * and latency percentiles, in total and per point. Another account's endpoint is NOT_FOUND.
 */
export async function endpointMetrics(
  db: Db,
  accountId: string,
  args: { endpointId: string; range?: MetricsRange | null },
  now = new Date(),
) {
  const endpoint = await endpointByKey(db, accountId, args.endpointId);
  const range = args.range ?? "DAY";
  const window = metricsWindow(range, now);
  const [methodRows, requestRows] = await Promise.all([
    store.endpointMethodPoints(db, accountId, endpoint.id, window),
    store.endpointRequestPoints(db, accountId, endpoint.id, window),
  ]);

  const methods = new Map<string, { method: string; calls: number; refused: number; credits: number }>();
  for (const r of methodRows) {
    const m = methods.get(r.method) ?? { method: r.method, calls: 0, refused: 0, credits: 0 };
    m.calls += r.calls;
    m.refused += r.refused;
    m.credits += r.credits;
    methods.set(r.method, m);
  }
  const busiest = [...methods.values()].sort(
    (a, b) => b.calls + b.refused - (a.calls + a.refused) || a.method.localeCompare(b.method),
  );
  const named = new Set(busiest.slice(0, METHOD_SERIES).map((m) => m.method));
  const callsAt = new Map<string, number>();
  for (const r of methodRows)
    addTo(callsAt, `${named.has(r.method) ? r.method : "other"}|${r.at.getTime()}`, r.calls + r.refused);
  const methodNames = [...named, ...(busiest.length > METHOD_SERIES ? ["other"] : [])];

  let requests = 0;
  const statuses = new Map<string, number>();
  const refusals = new Map<string, number>();
  const countsAt = new Map<string, number>();
  const binsAt = new Map<number, StoredSketch>();
  for (const r of requestRows) {
    const time = r.at.getTime();
    if (r.family === "requests") requests += r.n;
    else if (r.family === "status" || r.family === "refusal") {
      addTo(r.family === "status" ? statuses : refusals, r.key, r.n);
      addTo(countsAt, `${r.family}|${r.key}|${time}`, r.n);
    } else {
      const at = binsAt.get(time) ?? {};
      at[r.key] = (at[r.key] ?? 0) + r.n;
      binsAt.set(time, at);
    }
  }
  const sketchAt = new Map([...binsAt].map(([time, bins]) => [time, LatencySketch.of(bins)]));
  const sketch = new LatencySketch();
  for (const at of sketchAt.values()) sketch.merge(at);
  const statusNames = [...statuses.keys()].sort((a, b) => Number(a) - Number(b));
  const refusalNames = [...refusals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k]) => k);

  return {
    range,
    startTime: window.start,
    endTime: now,
    stepSeconds: window.stepSeconds,
    requests,
    calls: busiest.reduce((sum, m) => sum + m.calls, 0),
    refused: busiest.reduce((sum, m) => sum + m.refused, 0),
    p50: sketch.quantile(0.5),
    p95: sketch.quantile(0.95),
    p99: sketch.quantile(0.99),
    methods: busiest,
    statuses: statusNames.map((status) => ({ status: Number(status), requests: statuses.get(status) ?? 0 })),
    refusals: refusalNames.map((reason) => ({ reason, calls: refusals.get(reason) ?? 0 })),
    callPoints: densePoints(methodNames, window.times, (name, time) => callsAt.get(`${name}|${time}`) ?? 0),
    statusPoints: densePoints(statusNames, window.times, (name, time) => countsAt.get(`status|${name}|${time}`) ?? 0),
    refusalPoints: densePoints(
      refusalNames,
      window.times,
      (name, time) => countsAt.get(`refusal|${name}|${time}`) ?? 0,
    ),
    latencyPoints: [...sketchAt.entries()]
      .sort((a, b) => a[0] - b[0])
      .flatMap(([time, at]) =>
        QUANTILES.map(([name, q]) => ({ name, timestamp: new Date(time), value: at.quantile(q) })),
      ),
  };
}
