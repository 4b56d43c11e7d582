// The forecast of a period's bill: credits so far, projected to the period's end at the rate so far,
// against the plan's allowance, and the bill that comes to (periodLines, the one computation). Pure.
import { type PeriodBill, type PeriodBillInput, periodLines } from "./lines.ts";

const DAY_MS = 86_400_000;

export type ForecastSeries = "USED" | "PROJECTED" | "ALLOWANCE";

export interface BillForecast {
  period: { start: Date; end: Date };
  creditsSoFar: number;
  projectedCredits: number;
  allowance: number;
  bill: PeriodBill;
  /** Cumulative credits at each UTC midnight inside the period, per series (a chart's rows). */
  points: { at: Date; series: ForecastSeries; credits: number }[];
}

/**
 * `input` is the period's bill so far (its usage: the credits so far); `daily` the credits per UTC day
 * (each day's start, at or before the period's start for its first). The projection goes on at the rate
 * so far, from now to the period's end; the projected bill is periodLines with the projected credits.
 */
export function billForecast(
  input: PeriodBillInput,
  period: { start: Date; end: Date },
  daily: readonly { day: Date; credits: number }[],
  now: Date,
): BillForecast {
  const start = period.start.getTime();
  const end = period.end.getTime();
  const at = Math.min(Math.max(now.getTime(), start), end);
  const soFar = input.usage.credits;
  // The rate is taken over a day at least: minutes into a period, the credits so far say little of its
  // rate, and extrapolated over a month they overflowed the bill's arithmetic (found by the property test).
  const rate = at > start ? soFar / Math.max(at - start, DAY_MS) : 0;
  const projectedAt = (t: number) => Math.round(soFar + rate * Math.max(0, t - at));
  const projectedCredits = projectedAt(end);
  const points: BillForecast["points"] = [];
  const byDay = [...daily].sort((a, b) => a.day.getTime() - b.day.getTime());
  let used = 0;
  let next = 0;
  let lastPassed: number | null = null;
  for (let midnight = Math.ceil(start / DAY_MS) * DAY_MS; midnight < end; midnight += DAY_MS) {
    const time = new Date(midnight);
    points.push({ at: time, series: "ALLOWANCE", credits: input.usage.allowance });
    if (midnight <= at) {
      while (next < byDay.length && byDay[next].day.getTime() < midnight) used += byDay[next++].credits;
      points.push({ at: time, series: "USED", credits: used });
      lastPassed = midnight;
    } else {
      // The projection starts where the used line ends, so the two read as one line.
      if (lastPassed !== null && !points.some((p) => p.series === "PROJECTED"))
        points.push({ at: new Date(lastPassed), series: "PROJECTED", credits: used });
      points.push({ at: time, series: "PROJECTED", credits: projectedAt(midnight) });
    }
  }
  return {
    period,
    creditsSoFar: soFar,
    projectedCredits,
    allowance: input.usage.allowance,
    bill: periodLines({ ...input, usage: { ...input.usage, credits: projectedCredits } }),
    points,
  };
}
