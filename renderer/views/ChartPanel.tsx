// ECharts with modular imports and the SVG renderer (crisp, small data, and it renders under jsdom too);
// this module is loaded lazily so only chart screens pay for it.
import { BarChart, LineChart, PieChart } from "echarts/charts";
import { GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import * as echarts from "echarts/core";
import { SVGRenderer } from "echarts/renderers";
import ReactEChartsCore from "echarts-for-react/esm/core";
import { useReducedMotion } from "../motion.ts";
import type { ChartOption } from "./chartOption.ts";

echarts.use([LineChart, BarChart, PieChart, GridComponent, TooltipComponent, LegendComponent, SVGRenderer]);

export default function ChartPanel({ option }: { option: ChartOption }) {
  // Charts draw at once, without growing bars or sweeping slices, when the system asks for reduced motion.
  const reducedMotion = useReducedMotion();
  const shown = reducedMotion ? { ...option, animation: false } : option;
  return <ReactEChartsCore echarts={echarts} option={shown} notMerge style={{ height: 320 }} />;
}
