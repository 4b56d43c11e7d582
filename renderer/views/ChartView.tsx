import { Alert, Card, Empty, Skeleton } from "antd";
import { lazy, Suspense, useMemo } from "react";
import { useData, useOperation } from "../data.tsx";
import { useChartCheck } from "../faults.tsx";
import { resolveVariables, type Scope } from "../resolve.ts";
import { enumLabelOrSelf, schemaAtRef } from "../schema.ts";
import type { ChartView as ChartViewSpec } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";
import { buildChartOption } from "./chartOption.ts";

const ChartPanel = lazy(() => import("./ChartPanel.tsx"));

/** How a series is named: by the labels of the enum the view names (`seriesLabels`), else as it comes. */
function useSeriesLabel(view: ChartViewSpec): (name: string) => string {
  const { registry } = useData();
  return useMemo(() => {
    if (!view.seriesLabels) return (name: string) => name;
    const enumSchema = schemaAtRef(registry.schemas, view.seriesLabels);
    return (name: string) => enumLabelOrSelf(enumSchema, name);
  }, [view.seriesLabels, registry.schemas]);
}

export function ChartView({ view, scope }: { view: ChartViewSpec; scope: Scope }) {
  const variables = useMemo(() => resolveVariables(view.variables, scope), [view.variables, scope]);
  const result = useOperation(view.query, variables);
  const seriesLabel = useSeriesLabel(view);
  const fault = useChartCheck(view, result.data);
  const option = useMemo(
    () => (result.data ? buildChartOption(view, result.data, Date.now(), seriesLabel) : null),
    [view, result.data, seriesLabel],
  );
  const empty = option && (option.series as { data: unknown[] }[]).every((series) => !series.data.length);
  return (
    <Card data-view="chart" title={view.title}>
      {result.error ? (
        <Alert type="error" showIcon title={errorMessage(result.error)} />
      ) : fault ? (
        fault
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
