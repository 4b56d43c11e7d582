// Data apart from display: series come from query rows through an `encode` mapping; the chart type
// is a separate choice. Pure, so it is tested without ECharts.
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

export function buildChartOption(view: ChartView, data: unknown): ChartOption {
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
          name,
          radius: ["40%", "70%"],
          // A zero share has no slice; with none left the chart is empty rather than equal slices of nothing.
          data: points
            .filter(([, y]) => typeof y === "number" && y > 0)
            .map(([x, y]) => ({ name: String(x), value: y, itemStyle: { color: colours.get(String(x)) } })),
        });
      } else {
        const color = colours.get(name);
        if (view.chartType === "bar") {
          // Named series of bars are parts of one total per x, so they stack.
          series.push({
            type: "bar",
            name,
            data: points,
            itemStyle: { color },
            barMaxWidth: 40,
            ...(spec.encode.series ? { stack: "total" } : {}),
          });
        } else {
          series.push({
            type: "line",
            name,
            data: points,
            itemStyle: { color },
            lineStyle: { color },
            // A line needs two points; a lone point (one minute of data) shows as its symbol.
            showSymbol: points.length < 2,
            smooth: true,
            ...(view.chartType === "area" ? { areaStyle: { opacity: 0.15 } } : {}),
          });
        }
      }
    }
  }
  if (view.chartType === "pie") return { tooltip: { trigger: "item" }, legend: { bottom: 0 }, series };
  return {
    tooltip: { trigger: "axis" },
    ...(series.length > 1 ? { legend: { bottom: 0 } } : {}),
    grid: { left: 48, right: 24, top: 24, bottom: series.length > 1 ? 48 : 32 },
    xAxis: xAxisOf(
      view.xType ?? "time",
      grouped.flatMap(({ groups }) => [...groups.values()].flat().map(([x]) => x)),
    ),
    // An explicit `axisLabel: undefined` would replace ECharts' default and hide the labels.
    yAxis: view.yFormat ? { type: "value", axisLabel: { formatter: view.yFormat } } : { type: "value" },
    series,
  };
}

/**
 * A time axis ticks no finer than its data (per-minute rows get minute ticks, not labels every five
 * seconds crowding into each other when the data spans a minute or two), and drops labels that would
 * still overlap.
 */
function xAxisOf(type: NonNullable<ChartView["xType"]>, xs: unknown[]): ChartOption {
  if (type !== "time") return { type };
  const times = [...new Set(xs.map((x) => (typeof x === "number" ? x : Date.parse(String(x)))))]
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  let step = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) step = Math.min(step, times[i] - times[i - 1]);
  return {
    type,
    // The first and last ticks keep their labels: ECharts drops them at minute steps otherwise.
    axisLabel: { hideOverlap: true, showMinLabel: true, showMaxLabel: true },
    ...(Number.isFinite(step) ? { minInterval: step } : {}),
  };
}
