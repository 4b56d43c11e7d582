import { Alert, Card, Empty, Skeleton } from "antd";
import { lazy, Suspense, useMemo } from "react";
import { useOperation } from "../data.tsx";
import { resolveVariables, type Scope } from "../resolve.ts";
import type { ChartView as ChartViewSpec } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";
import { buildChartOption } from "./chartOption.ts";

const ChartPanel = lazy(() => import("./ChartPanel.tsx"));

export function ChartView({ view, scope }: { view: ChartViewSpec; scope: Scope }) {
  const variables = useMemo(() => resolveVariables(view.variables, scope), [view.variables, scope]);
  const result = useOperation(view.query, variables);
  const option = useMemo(() => (result.data ? buildChartOption(view, result.data) : null), [view, result.data]);
  const empty = option && (option.series as { data: unknown[] }[]).every((series) => !series.data.length);
  return (
    <Card data-view="chart" title={view.title}>
      {result.error ? (
        <Alert type="error" showIcon title={errorMessage(result.error)} />
      ) : !option ? (
        <Skeleton active />
      ) : empty ? (
        <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="No data for this period" />
      ) : (
        <Suspense fallback={<Skeleton active />}>
          <ChartPanel option={option} />
        </Suspense>
      )}
    </Card>
  );
}
