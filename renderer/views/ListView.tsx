// The list view: a TanStack Table model (columns, row ids) drawn by ListTable, or with
// virtualised rows when a page is long; its state (URL, query, sort, selection), toolbar, bulk bar
// and pager are modules of their own beside it.
import { type ColumnDef, useTable } from "@tanstack/react-table";
import { Alert, Button, Empty, Skeleton, Space } from "antd";
import { lazy, Suspense, useMemo } from "react";
import { useNavigate } from "react-router";
import { Actions } from "../actions.tsx";
import { useData } from "../data.tsx";
import { RecordSourceProvider } from "../faults.tsx";
import { Intro } from "../Intro.tsx";
import { PHONE_WIDTH, useMediaQuery } from "../media.ts";
import { can, requiredRole } from "../permissions.ts";
import { evalPredicate, fillTemplate, getPointer, type Scope } from "../resolve.ts";
import { fieldSchema, labelFor } from "../schema.ts";
import type { ListView as ListViewSpec } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";
import { Muted } from "../widgets/text.tsx";
import { FieldValue } from "./FieldValue.tsx";
import type { ListBulkBar as ListBulkBarComponent } from "./ListBulkBar.tsx";
import { ListGroups } from "./ListGroups.tsx";
import { ListPager } from "./ListPager.tsx";
import { ListTable } from "./ListTable.tsx";
import { hasToolbar, ListToolbar } from "./ListToolbar.tsx";
import { type ListFeatures, listFeatures } from "./tableFeatures.ts";
import { type Row, useListState } from "./useListState.ts";
import type { VirtualRows as VirtualRowsComponent } from "./VirtualRows.tsx";

// Long lists only: the virtualiser loads with the first list that needs it.
// Shown once rows are selected for a bulk action: loaded then, not with every list.
const ListBulkBar = lazy(() =>
  import("./ListBulkBar.tsx").then((module) => ({ default: module.ListBulkBar })),
) as unknown as typeof ListBulkBarComponent;
const VirtualRows = lazy(() =>
  import("./VirtualRows.tsx").then((module) => ({ default: module.VirtualRows })),
) as unknown as typeof VirtualRowsComponent;

/** Above this many rows on one page the list renders only the rows in view (but on a phone, as cards). */
export const VIRTUAL_THRESHOLD = 100;

export function ListView({ view, scope }: { view: ListViewSpec; scope: Scope }) {
  const { registry, viewer } = useData();
  const navigate = useNavigate();
  const state = useListState(view, scope);
  // On a phone every list is cards (decision 1200); a page holds at most 500 rows (decision 1330).
  const phone = useMediaQuery(PHONE_WIDTH);
  const { rows, result, rowSelection, setRowSelection } = state;
  const entity = view.entity ? registry.schemas[view.entity] : undefined;

  const columns = useMemo<ColumnDef<ListFeatures, Row>[]>(
    () =>
      view.columns.map((field, index) => ({
        id: field.field || String(index),
        header: labelFor(field, fieldSchema(entity, field.field, registry.schemas)),
        accessorFn: (row: Row) => getPointer(row, field.field),
        cell: (context) => (
          <FieldValue
            field={field}
            record={context.row.original}
            entity={entity}
            scope={{ ...scope, row: context.row.original }}
          />
        ),
      })),
    [view.columns, entity, scope, registry.schemas],
  );

  const table = useTable({
    features: listFeatures,
    columns,
    data: rows,
    getRowId: (row: Row, index: number) => state.rowKey(row, index),
  });

  const modelRows = table.getRowModel().rows;
  // Selection only helps someone who may run at least one bulk action.
  const selectable = (view.bulkActions ?? []).some((action) =>
    can(viewer.userRole, requiredRole(action.role, Boolean(action.mutation))),
  );
  const selectedRows = modelRows.filter((row) => rowSelection[row.id]).map((row) => row.original);
  const rowActions = view.rowActions ?? [];

  const empty = (
    <Empty
      image={Empty.PRESENTED_IMAGE_SIMPLE}
      description={
        state.hasFilters ? (
          "Nothing matches these filters."
        ) : (
          <Space orientation="vertical" size={2}>
            <strong>{view.empty?.title ?? "Nothing here yet"}</strong>
            {view.empty?.description ? <Muted>{view.empty.description}</Muted> : null}
          </Space>
        )
      }
    >
      {!state.hasFilters && view.toolbar?.length ? (
        <Actions actions={view.toolbar.filter((action) => action.primary)} scope={scope} />
      ) : null}
    </Empty>
  );

  const onRowOpen = view.rowLink
    ? (row: Row) => navigate(fillTemplate(view.rowLink as string, row, true, scope))
    : undefined;
  const selection = selectable ? { selected: rowSelection, onChange: setRowSelection } : undefined;
  const sorting = view.sort ? { orderOf: state.sortOrderOf, sortBy: state.sortBy } : undefined;

  const loading = <Skeleton active title={false} paragraph={{ rows: 5 }} className="np-list-skeleton" />;
  return (
    <RecordSourceProvider operation={view.query} path={view.rows}>
      <div className="np-list" data-view="list">
        {hasToolbar(view) ? <ListToolbar view={view} scope={scope} entity={entity} state={state} /> : null}
        {view.description ? <Intro className="np-list-description">{view.description}</Intro> : null}
        {selectedRows.length ? (
          <Suspense fallback={null}>
            <ListBulkBar
              view={view}
              scope={scope}
              selectedRows={selectedRows}
              clearSelection={() => setRowSelection({})}
            />
          </Suspense>
        ) : null}
        {view.notice && result.data && evalPredicate(view.notice.when, result.data, scope) ? (
          <Alert
            type={view.notice.type ?? "info"}
            showIcon
            data-notice
            style={{ marginBottom: 12 }}
            title={view.notice.text}
            action={
              view.notice.actions?.length ? (
                <Actions actions={view.notice.actions} subject={result.data} scope={scope} size="small" />
              ) : undefined
            }
          />
        ) : null}
        {state.rowsFault}
        {result.error ? (
          <Alert
            type="error"
            showIcon
            title="Could not load this list"
            description={errorMessage(result.error)}
            action={
              <Button size="small" onClick={() => void result.mutate()}>
                Retry
              </Button>
            }
          />
        ) : result.isLoading && !rows.length ? (
          loading
        ) : view.group ? (
          <ListGroups
            group={view.group}
            columns={columns}
            rows={rows}
            rowKey={state.rowKey}
            view={view}
            actions={rowActions}
            scope={scope}
            sorting={sorting}
            onRowOpen={onRowOpen}
            refreshing={result.isValidating && !result.isLoading}
            empty={empty}
          />
        ) : rows.length > VIRTUAL_THRESHOLD && !phone ? (
          <Suspense fallback={loading}>
            <VirtualRows
              table={table}
              view={view}
              onRowOpen={onRowOpen}
              actions={rowActions}
              scope={scope}
              selection={selection}
              sorting={sorting}
            />
          </Suspense>
        ) : (
          <ListTable
            table={table}
            view={view}
            actions={rowActions}
            scope={scope}
            selection={selection}
            sorting={sorting}
            onRowOpen={onRowOpen}
            refreshing={result.isValidating && !result.isLoading}
            empty={empty}
          />
        )}
        {state.paging ? <ListPager paging={state.paging} shown={rows.length} /> : null}
      </div>
    </RecordSourceProvider>
  );
}
