// The one rule for the width of a metric's points (its step) and where a point starts: the metrics of
// functions, streams, webhooks and endpoints and the usage ticks all bucket per-minute rows with it.
import { type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { badInput } from "./errors.ts";

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

/** The steps a window may have, finest first (seconds); each divides the next. */
const STEP_SECONDS = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 6 * HOUR, DAY, 7 * DAY] as const;

/**
 * The most points a window's series has: 200 keeps a bar a few pixels wide on a laptop's chart and
 * gives the same steps as endpoint metrics (1 h per minute, 24 h per 15 minutes, 7 days per hour, 30
 * days per 6 hours). Only a window longer than 200 weeks (all of a years-old stream) has more.
 */
const MAX_POINTS = 200;

/**
 * Points start at multiples of their step counted from Monday 5 January 1970, 00:00 UTC: for every step
 * up to a day that is the same as counting from the epoch (UTC minutes, hours, days), and weeks start on
 * Mondays (UTC).
 */
const ORIGIN_SECONDS = 4 * DAY;

/** The start of the point holding `at` (ms). */
function bucketOf(at: number, stepSeconds: number): number {
  const step = stepSeconds * 1000;
  const origin = ORIGIN_SECONDS * 1000;
  return Math.floor((at - origin) / step) * step + origin;
}

/** How many points cover [from, to): the points holding its first and last instant, and those between. */
function pointsOf(from: number, to: number, stepSeconds: number): number {
  return (bucketOf(Math.max(from, to - 1), stepSeconds) - bucketOf(from, stepSeconds)) / (stepSeconds * 1000) + 1;
}

/** The finest step that covers [from, to) in at most MAX_POINTS points (the coarsest when none does). */
export function stepFor(from: Date, to: Date): number {
  return (
    STEP_SECONDS.find((step) => pointsOf(from.getTime(), to.getTime(), step) <= MAX_POINTS) ??
    STEP_SECONDS[STEP_SECONDS.length - 1]
  );
}

/** The starts of the points covering [from, to), oldest first: a dense series has one value at each. */
function bucketStarts(from: Date, to: Date, stepSeconds: number): Date[] {
  const starts: Date[] = [];
  const last = bucketOf(Math.max(from.getTime(), to.getTime() - 1), stepSeconds);
  for (let at = bucketOf(from.getTime(), stepSeconds); at <= last; at += stepSeconds * 1000) starts.push(new Date(at));
  return starts;
}

/**
 * The same start in SQL, of a timestamptz column or expression. The step is written into the text (an
 * integer of ours), so the same expression in select and group by is one expression to PostgreSQL.
 */
export function bucketStart(at: SQLWrapper, stepSeconds: number): SQL<Date> {
  const step = sql.raw(String(Math.trunc(stepSeconds)));
  const origin = sql.raw(String(ORIGIN_SECONDS));
  return sql<Date>`to_timestamp(floor((extract(epoch from ${at}) - ${origin}) / ${step}) * ${step} + ${origin})`;
}

/** The fixed ticks of usage and billing charts, as their `tick` arguments name them. */
export const TICK_SECONDS = { hour: HOUR, day: DAY } as const;

/** The start of the minute holding `at`: per-minute rows of a window start at or after it. */
export const floorMinute = (at: Date): Date => new Date(bucketOf(at.getTime(), MINUTE));

/** The window a metrics query counted and the width of its points. */
export interface MetricsWindow {
  from: Date;
  to: Date;
  stepSeconds: number;
}

/**
 * The window of a metrics query and its step: from `start` to `end` (default now), at most `maxDays`
 * long (its last days). Without a start ("All time") it starts at the first recorded minute
 * (`firstMinute`, or `end` when nothing was recorded). An end not after the start is refused.
 */
export function metricsWindow(
  start: Date | null | undefined,
  end: Date | null | undefined,
  options: { maxDays?: number; firstMinute?: Date | null } = {},
): MetricsWindow {
  const to = end ?? new Date();
  // The reason is the whole message too: a screen of charts has no field to show it beside.
  const reason = "The end of the window must be after its start.";
  if (start && to.getTime() <= start.getTime()) throw badInput([{ pointer: "/endDate", message: reason }], reason);
  let from = start ?? options.firstMinute ?? to;
  if (from.getTime() > to.getTime()) from = to;
  if (options.maxDays) from = new Date(Math.max(from.getTime(), to.getTime() - options.maxDays * DAY * 1000));
  return { from, to, stepSeconds: stepFor(from, to) };
}

type Point = { timestamp: Date; value: number };

/**
 * The series of a window from its rows per point (`at`, a point's start, as bucketStart gives): counts
 * and cumulative sums are dense (every point of the window, so a chart's bars and lines show where
 * nothing happened), averages and the like only where they have a value. A window with no row has no
 * points at all, so a chart says there is no data rather than drawing zeros.
 */
export function bucketSeries<R extends { at: Date }>(window: MetricsWindow, rows: R[]) {
  const byStart = new Map(rows.map((row) => [row.at.getTime(), row]));
  const starts = rows.length ? bucketStarts(window.from, window.to, window.stepSeconds) : [];
  return {
    /** The point's sum; zero at a point without a row. */
    counts(value: (row: R) => number): Point[] {
      return starts.map((at) => {
        const row = byStart.get(at.getTime());
        return { timestamp: at, value: row ? value(row) : 0 };
      });
    },
    /** Summed from the window's start up to each point's end; unchanged over points without a row. */
    cumulative(value: (row: R) => number): Point[] {
      let total = 0;
      return starts.map((at) => {
        const row = byStart.get(at.getTime());
        if (row) total += value(row);
        return { timestamp: at, value: total };
      });
    },
    /** A value only at the points whose row has one (`value` gives null where it has none). */
    sparse(value: (row: R) => number | null): Point[] {
      return rows.flatMap((row) => {
        const v = value(row);
        return v === null ? [] : [{ timestamp: row.at, value: v }];
      });
    },
  };
}
