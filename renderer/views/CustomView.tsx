// A `custom` view: a named widget's view from the widget registry, with its optional query result.
import { Alert, Card, Skeleton } from "antd";
import { Suspense, useMemo } from "react";
import { useOperation } from "../data.tsx";
import { manifestFault } from "../faults.tsx";
import { getPath, resolveVariables, type Scope } from "../resolve.ts";
import type { CustomView as CustomViewSpec } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";
import { getWidget } from "../widgets/registry.ts";

export function CustomView({ view, scope }: { view: CustomViewSpec; scope: Scope }) {
  const variables = useMemo(() => resolveVariables(view.variables, scope), [view.variables, scope]);
  const result = useOperation(view.query, variables);
  const Widget = getWidget(view.widget)?.view;
  const data = view.record && result.data ? getPath(result.data, view.record) : result.data;
  // A record that does not exist is the page's to say (its detail view shows "Not found"), not each card's.
  if (result.error?.code === "NOT_FOUND") return null;
  return (
    <Card data-view="custom" title={view.title}>
      {!Widget ? (
        manifestFault(`Unknown widget '${view.widget}' for a custom view`)
      ) : result.error ? (
        <Alert type="error" showIcon title={errorMessage(result.error)} />
      ) : view.query && !result.data ? (
        <Skeleton active />
      ) : (
        <Suspense fallback={<Skeleton active />}>
          <Widget data={data} options={view.options ?? {}} scope={scope} />
        </Suspense>
      )}
    </Card>
  );
}
