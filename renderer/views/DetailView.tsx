// The detail view: one record from a named query, shown in titled sections of fields whose labels
// and widgets come from the entity schema; record actions in the card's header.
import { Alert, Button, Card, Descriptions, Result, Skeleton, Space, Typography } from "antd";
import { useMemo } from "react";
import { Actions } from "../actions.tsx";
import { useData, useOperation, useRecordFormat } from "../data.tsx";
import { RecordSourceProvider, useResultPathCheck } from "../faults.tsx";
import { evalPredicate, fillTemplate, getPath, resolveVariables, type Scope } from "../resolve.ts";
import { fieldSchema, labelFor } from "../schema.ts";
import type { DetailView as DetailViewSpec } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";
import { FieldValue } from "./FieldValue.tsx";

/** `titleInHeading`: the page heading already shows this record's title, so the card does not repeat it. */
export function DetailView({
  view,
  scope,
  titleInHeading = false,
}: {
  view: DetailViewSpec;
  scope: Scope;
  titleInHeading?: boolean;
}) {
  const { registry } = useData();
  const entity = view.entity ? registry.schemas[view.entity] : undefined;
  const variables = useMemo(() => resolveVariables(view.variables, scope), [view.variables, scope]);
  const live = view.live;
  // A live view asks again while its record is in a state that still changes (the record is read
  // from the latest answer each time, so the polling stops once the record says it is final). Before
  // the first answer it keeps the interval: SWR asks for it once, at mount, and starts no timer on 0.
  const config = useMemo(
    () =>
      live
        ? {
            refreshInterval: (data: unknown) =>
              data === undefined || evalPredicate(live.while, getPath(data, view.record), scope) ? live.everyMs : 0,
          }
        : undefined,
    [live, view.record, scope],
  );
  const result = useOperation(view.query, variables, config);
  const record = result.data ? getPath(result.data, view.record) : undefined;
  const recordScope = useMemo(() => ({ ...scope, record }), [scope, record]);
  const formatField = useRecordFormat(view.entity);
  const recordFault = useResultPathCheck(view.query, view.record, result.data);

  if (result.error?.code === "NOT_FOUND")
    return <Result status="404" title="Not found" subTitle="It may have been removed, or the link is wrong." />;
  if (result.error)
    return (
      <Alert
        type="error"
        showIcon
        title="Could not load this page"
        description={errorMessage(result.error)}
        action={
          <Button size="small" onClick={() => void result.mutate()}>
            Retry
          </Button>
        }
      />
    );
  if (recordFault) return recordFault;
  if (!record)
    return (
      <Card loading>
        <Skeleton active />
      </Card>
    );

  return (
    <RecordSourceProvider operation={view.query} path={view.record}>
      <Card
        data-view="detail"
        title={
          view.title && !titleInHeading ? (
            // The level below the page's h1 (axe heading-order), at the size of the h4 it was.
            <Typography.Title level={2} style={{ margin: 0, fontSize: 20, lineHeight: 1.4 }}>
              {fillTemplate(view.title, record, false, recordScope, formatField) || "Untitled"}
            </Typography.Title>
          ) : undefined
        }
        extra={
          view.actions?.length ? <Actions actions={view.actions} subject={record} scope={recordScope} /> : undefined
        }
      >
        <Space orientation="vertical" size={24} style={{ width: "100%" }}>
          {view.sections.map((section, index) => (
            <Descriptions
              key={section.title ?? index}
              title={section.title}
              bordered
              size="middle"
              column={1}
              styles={{ label: { width: 200 } }}
              items={section.fields
                .filter((field) => evalPredicate(field.visibleWhen, record, recordScope))
                .map((field) => ({
                  // A value may show twice, by two widgets (a payment request as text and as a QR code).
                  key: `${field.field}:${field.widget ?? ""}`,
                  label: labelFor(field, fieldSchema(entity, field.field, registry.schemas, record)),
                  children: <FieldValue field={field} record={record} entity={entity} scope={recordScope} />,
                }))}
            />
          ))}
        </Space>
      </Card>
    </RecordSourceProvider>
  );
}
