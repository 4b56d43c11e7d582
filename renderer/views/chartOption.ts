// Data apart from display: series come from query rows through an `encode` mapping; the chart type
// is a separate choice. Pure, so it is tested without ECharts.
import { formatBytes } from "../format.ts";
import { getPath, getPointer } from "../resolve.ts";
import type { ChartView } from "../types.ts";

export interface ChartOption {
  [key: string]: unknown;
}

// ECharts' default palette, assigned here by name so that charts showing the same names give each
// the same colour (ECharts itself colours bars by series order and pie slices by data order).
const PALETTE = ["#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"];

/** A colour per name: a hash of the name picks a slot, taken in sorted order with probing so that
 * names in one chart differ while the palette lasts, and the same set of names always maps alike. */
export function coloursByName(names: Iterable<string>): Map<string, string> {
  const colours = new Map<string, string>();
  const taken = new Set<number>();
  for (const name of [...new Set(names)].sort()) {
    let slot = 0;
    for (let i = 0; i < name.length; i++) slot = (slot * 31 + name.charCodeAt(i)) >>> 0;
    slot %= PALETTE.length;
    for (let probe = 0; probe < PALETTE.length && taken.has(slot); probe++) slot = (slot + 1) % PALETTE.length;
    taken.add(slot);
    colours.set(name, PALETTE[slot]);
  }
  return colours;
}

export function buildChartOption(
  view: ChartView,
  data: unknown,
  now = Date.now(),
  seriesLabel: (name: string) => string = (name) => name,
): ChartOption {
  const timeWindow = view.chartType === "pie" || (view.xType ?? "time") !== "time" ? undefined : windowOf(view, data);
  const grouped: { spec: ChartView["series"][number]; groups: Map<string, [unknown, unknown][]> }[] = [];
  for (const spec of view.series) {
    const rows = getPath(data, spec.rows);
    if (!Array.isArray(rows)) continue;
    const groups = new Map<string, [unknown, unknown][]>();
    for (const row of rows) {
      const name = spec.encode.series ? String(getPointer(row, spec.encode.series) ?? "") : (spec.name ?? "");
      const points = groups.get(name) ?? [];
      points.push([getPointer(row, spec.encode.x), getPointer(row, spec.encode.y)]);
      groups.set(name, points);
    }
    grouped.push({ spec, groups });
  }
  /** Every point of every series, as they stand when called (before or after they are put on the grid). */
  const allPoints = () => grouped.flatMap(({ groups }) => [...groups.values()].flat());
  // The grid runs through the data's points (the service's point starts), else through the window's start.
  const anchor = allPoints()
    .map(([x]) => timeOf(x))
    .find(Number.isFinite);
  const grid = timeWindow && windowGrid(timeWindow, anchor ?? timeWindow.from);
  if (timeWindow && grid)
    for (const { groups } of grouped)
      for (const [name, points] of groups) groups.set(name, onGrid(points, timeWindow, grid, view.chartType === "bar"));
  // Over every series of the chart, so two series never share a colour while the palette lasts.
  const colours = coloursByName(
    grouped.flatMap(({ groups }) =>
      view.chartType === "pie" ? [...groups.values()].flat().map(([x]) => String(x)) : [...groups.keys()],
    ),
  );
  const series: Record<string, unknown>[] = [];
  for (const { spec, groups } of grouped) {
    for (const [name, points] of groups) {
      if (view.chartType === "pie") {
        series.push({
          type: "pie",
          name: seriesLabel(name),
          radius: ["40%", "70%"],
          // Small slices' labels crowded into each other: a slice under 6° has none, and a label that would
          // still overlap another is hidden. Every slice is in the legend and its tooltip.
          minShowLabelAngle: 6,
          labelLayout: { hideOverlap: true },
          // A zero share has no slice; with none left the chart is empty rather than equal slices of nothing.
          data: points
            .filter(([, y]) => typeof y === "number" && y > 0)
            .map(([x, y]) => ({
              name: seriesLabel(String(x)),
              value: y,
              itemStyle: { color: colours.get(String(x)) },
            })),
        });
      } else {
        const color = colours.get(name);
        if (view.chartType === "bar") {
          // Named series of bars are parts of one total per x, so they stack.
          series.push({
            type: "bar",
            name: seriesLabel(name),
            data: points,
            itemStyle: { color },
            barMaxWidth: 40,
            ...(spec.encode.series ? { stack: "total" } : {}),
          });
        } else {
          series.push({
            type: "line",
            name: seriesLabel(name),
            data: points,
            itemStyle: { color },
            lineStyle: { color, ...(view.dashedSeries?.includes(name) ? { type: "dashed" } : {}) },
            // A line needs two points; a lone point (one minute of data, or one between gaps) shows as its symbol.
            showSymbol: points.length < 2 || hasLonePoint(points),
            smooth: true,
            ...(view.chartType === "area" ? { areaStyle: { opacity: 0.15 } } : {}),
          });
        }
      }
    }
  }
  if (view.chartType === "pie") return { tooltip: { trigger: "item" }, legend: { bottom: 0 }, series };
  return {
    tooltip: view.yUnit === "B" ? { trigger: "axis", valueFormatter: tooltipBytes } : { trigger: "axis" },
    ...(series.length > 1 ? { legend: { bottom: 0 } } : {}),
    grid: { left: 48, right: 24, top: 24, bottom: series.length > 1 ? 48 : 32 },
    xAxis:
      timeWindow && grid
        ? windowAxis(timeWindow, grid, view.chartType === "bar", now)
        : xAxisOf(
            view.xType ?? "time",
            allPoints().map(([x]) => x),
            view.chartType === "bar",
            now,
          ),
    // An explicit `axisLabel: undefined` would replace ECharts' default and hide the labels.
    yAxis: valueAxis(
      view,
      allPoints().map(([, y]) => y),
    ),
    series,
  };
}

/** The value axis: byte sizes for `yUnit: "B"`, else the view's ECharts label template, else ECharts' own labels. */
function valueAxis(view: ChartView, values: unknown[]) {
  if (view.yUnit === "B") {
    const largest = Math.max(0, ...values.map(Number).filter(Number.isFinite));
    const interval = byteInterval(largest);
    return {
      type: "value",
      // The top on the grid too: else ECharts ends the axis at the data's largest value, its label crowding the tick below.
      ...(interval ? { interval, max: Math.ceil(largest / interval) * interval } : {}),
      axisLabel: { formatter: (value: number) => formatBytes(value) },
    };
  }
  // Counts (every value whole) get whole ticks: 3 runs drawn on 0, 0.5 … 3 read as half runs.
  const whole = values.every((value) => value === null || value === undefined || Number.isInteger(Number(value)));
  return {
    type: "value",
    ...(whole ? { minInterval: 1 } : {}),
    ...(view.yFormat ? { axisLabel: { formatter: view.yFormat } } : {}),
  };
}

/**
 * Ticks for bytes on the binary grid (1, 2 or 5 × 10ⁿ KiB, MiB…), about five up to the largest value:
 * ECharts' decimal ticks (10,000, 20,000) read as 9.8 KiB, 20 KiB, 29 KiB.
 */
function byteInterval(largest: number): number | undefined {
  if (largest <= 0) return undefined;
  let unit = 1;
  while (largest / unit >= 1024) unit *= 1024;
  const rough = largest / unit / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? 10 * power;
  return Math.max(1, step * unit);
}

const tooltipBytes = (value: unknown) => (typeof value === "number" ? formatBytes(value) : String(value ?? "—"));

/** A time as ms: a number as it is, else its text parsed (ISO date-times). */
const timeOf = (x: unknown) => (typeof x === "number" ? x : Date.parse(String(x)));

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Tick spacings a time axis may use, finest first. */
const TICK_SPACINGS = [
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  30 * DAY,
];
const MAX_TICKS = 7;

const localOffset = (time: number) => new Date(time).getTimezoneOffset() * MINUTE;

/**
 * Where a time axis puts its ticks: only at positions of the data's own grid (first, first + step, …),
 * at most MAX_TICKS of them, as many steps apart as the finest spacing that allows, on round times
 * (local midnight, the hour, a quarter …) when the grid has them, else on UTC's, else from the first point.
 */
export function timeTicks(first: number, last: number, step: number): number[] {
  const span = last - first;
  const spacing =
    TICK_SPACINGS.find((s) => s >= step && s % step === 0 && span / s < MAX_TICKS) ??
    step * Math.max(1, Math.ceil(span / step / (MAX_TICKS - 1)));
  const grid = (from: number) => {
    const ticks: number[] = [];
    for (let t = from; t <= last; t += spacing) ticks.push(t);
    return ticks;
  };
  const candidates: number[] = [];
  for (let t = first; t <= last && t < first + spacing; t += step) candidates.push(t);
  const round =
    candidates.find((t) => (t - localOffset(t)) % spacing === 0) ?? candidates.find((t) => t % spacing === 0);
  return grid(round ?? first);
}

const dayOf = (time: number, timeZone?: string) =>
  new Date(time).toLocaleDateString("en", { month: "short", day: "numeric", timeZone });
const clockOf = (time: number) =>
  new Date(time).toLocaleTimeString("en", { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

/**
 * Tick labels: points a day or more wide are the service's UTC days, so they read as the UTC date; finer
 * ones are in local time, the date where a day starts (alone at midnight) or at the first tick, the
 * time within a day.
 */
export function tickLabels(ticks: number[], step: number): Map<number, string> {
  const labels = new Map<number, string>();
  ticks.forEach((tick, i) => {
    if (step >= DAY) {
      labels.set(tick, dayOf(tick, "UTC"));
      return;
    }
    const day = dayOf(tick);
    const newDay = i === 0 || dayOf(ticks[i - 1]) !== day;
    const midnight = (tick - localOffset(tick)) % DAY === 0;
    labels.set(tick, midnight ? day : newDay ? `${day} ${clockOf(tick)}` : clockOf(tick));
  });
  return labels;
}

/**
 * A time axis spans its data and no more: from the first point to the last (bars get half a step each
 * side to fit, but the axis never reaches past now), so it never runs into the future or pads a lone
 * point with a day either side as ECharts would. Its ticks sit on the data's own grid (timeTicks), so
 * each tick is a point of the series, labelled in the user's time zone.
 */
function xAxisOf(type: NonNullable<ChartView["xType"]>, xs: unknown[], bars: boolean, now: number): ChartOption {
  if (type !== "time") return { type };
  const times = [...new Set(xs.map(timeOf))].filter(Number.isFinite).sort((a, b) => a - b);
  if (times.length === 0) return { type };
  let step = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) step = Math.min(step, times[i] - times[i - 1]);
  // A lone point says nothing of its step: a minute, the finest any series of the service has.
  const width = Number.isFinite(step) ? step : MINUTE;
  const first = times[0];
  const last = times[times.length - 1];
  return timeAxisOption(first, last, width, bars || times.length === 1 ? width / 2 : 0, now);
}

/** A time axis from `first` to `last` (`pad` beyond each, but never past now), ticked on the grid `step` apart. */
function timeAxisOption(first: number, last: number, step: number, pad: number, now: number): ChartOption {
  const ticks = timeTicks(first, last, step);
  const labels = tickLabels(ticks, step);
  return {
    type: "time",
    min: first - pad,
    max: Math.max(last, Math.min(last + pad, now)),
    axisTick: { customValues: ticks },
    axisLabel: {
      customValues: ticks,
      hideOverlap: true,
      formatter: (value: number) => labels.get(value) ?? `${dayOf(value)} ${clockOf(value)}`,
    },
  };
}

/** The window a chart's `timeAxis` names in its query's result (ms), when the result has it. */
interface TimeWindow {
  from: number;
  to: number;
  step: number;
}

function windowOf(view: ChartView, data: unknown): TimeWindow | undefined {
  if (!view.timeAxis) return undefined;
  const from = Date.parse(String(getPath(data, view.timeAxis.from)));
  const to = Date.parse(String(getPath(data, view.timeAxis.to)));
  const step = Number(getPath(data, view.timeAxis.stepSeconds)) * 1000;
  if (!Number.isFinite(from) || !Number.isFinite(to) || !(step > 0) || to < from) return undefined;
  return { from, to, step };
}

/** More points than this on a grid means a step that does not fit the window: its data is drawn as it is. */
const MAX_GRID_POINTS = 2000;

/** Points `step` apart on a chart's time axis, from `first` to `last` (ms). */
interface Grid {
  first: number;
  last: number;
}

/**
 * The window's grid: the points `step` apart through `anchor`, from the one holding `from` to the one
 * holding the window's last instant.
 */
function windowGrid(timeWindow: TimeWindow, anchor: number): Grid {
  const first = anchor - Math.ceil((anchor - timeWindow.from) / timeWindow.step) * timeWindow.step;
  const last = first + Math.floor((Math.max(timeWindow.to - 1, first) - first) / timeWindow.step) * timeWindow.step;
  return { first, last };
}

/**
 * A series on the window's grid: a value at every point, a bar's missing point zero (so bars keep the
 * step's width) and a line's null (a gap: the line never runs through a point with nothing to say).
 * A series without points stays empty, so the chart says there is no data.
 */
function onGrid(points: [unknown, unknown][], timeWindow: TimeWindow, grid: Grid, bars: boolean): [unknown, unknown][] {
  const { first, last } = grid;
  if (points.length === 0 || (last - first) / timeWindow.step > MAX_GRID_POINTS) return points;
  const byTime = new Map(points.map(([x, y]) => [timeOf(x), y]));
  const filled: [unknown, unknown][] = [];
  for (let t = first; t <= last; t += timeWindow.step)
    filled.push([t, byTime.has(t) ? byTime.get(t) : bars ? 0 : null]);
  return filled;
}

/** Whether a line has a point with no value on either side: drawn only as its symbol. */
function hasLonePoint(points: [unknown, unknown][]): boolean {
  const has = (i: number) => i >= 0 && i < points.length && points[i][1] !== null && points[i][1] !== undefined;
  return points.some((_, i) => has(i) && !has(i - 1) && !has(i + 1));
}

/**
 * A time axis over the whole window, not just its data: from the point holding its start to the one
 * holding its end (bars half a step either side, never past now), ticked and labelled on the step's grid.
 */
function windowAxis(timeWindow: TimeWindow, { first, last }: Grid, bars: boolean, now: number): ChartOption {
  return timeAxisOption(first, last, timeWindow.step, bars || first === last ? timeWindow.step / 2 : 0, now);
}
