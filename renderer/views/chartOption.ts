// Data apart from display: series come from query rows through an `encode` mapping; the chart type
// is a separate choice. Pure, so it is tested without ECharts.
import { getPath, getPointer } from "../resolve.ts";
import type { ChartView } from "../types.ts";

export interface ChartOption {
  [key: string]: unknown;
}

export function buildChartOption(view: ChartView, data: unknown): ChartOption {
  const series: Record<string, unknown>[] = [];
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
    for (const [name, points] of groups) {
      if (view.chartType === "pie") {
        series.push({
          type: "pie",
          name,
          radius: ["40%", "70%"],
          data: points.map(([x, y]) => ({ name: String(x), value: y })),
        });
      } else {
        series.push({
          type: view.chartType === "bar" ? "bar" : "line",
          name,
          data: points,
          showSymbol: false,
          smooth: view.chartType !== "bar",
          ...(view.chartType === "area" ? { areaStyle: { opacity: 0.15 } } : {}),
        });
      }
    }
  }
  if (view.chartType === "pie") return { tooltip: { trigger: "item" }, legend: { bottom: 0 }, series };
  return {
    tooltip: { trigger: "axis" },
    legend: series.length > 1 ? { bottom: 0 } : undefined,
    grid: { left: 48, right: 24, top: 24, bottom: series.length > 1 ? 48 : 32 },
    xAxis: { type: view.xType ?? "time" },
    yAxis: { type: "value", axisLabel: view.yFormat ? { formatter: view.yFormat } : undefined },
    series,
  };
}
