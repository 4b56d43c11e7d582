// The list view: a TanStack Table model (columns, row ids, selection) rendered with antd's Table;
// server-side cursor or token paging (the stack of earlier pages in the URL too), a time range, search, filters and sort kept in the URL and passed as variables;
// row, toolbar and bulk actions; empty, loading and error states; virtualised rows when long.
import { type ColumnDef, flexRender, rowSelectionFeature, tableFeatures, useTable } from "@tanstack/react-table";
import { Alert, App, Button, Empty, Input, Select, Skeleton, Space, Table, Typography } from "antd";
import type { SortOrder } from "antd/es/table/interface";
import { type ReactNode, useMemo, useState } from "react";
import { useNavigate, useSearchParams } from "react-router";
import { Actions, actionState, errorMessage } from "../actions.tsx";
import { useData, useOperation, useRefresh, useRunOperation } from "../data.tsx";
import { useRemoteOptions } from "../form/RemoteOptions.tsx";
import { icon } from "../icons.tsx";
import { can, requiredRole } from "../permissions.ts";
import { fillTemplate, getPath, getPointer, resolveVariables, type Scope } from "../resolve.ts";
import { enumLabel, fieldSchema, labelFor } from "../schema.ts";
import type { Action, Filter, ListView as ListViewSpec, OptionsSource, StaticOption, TimeRange } from "../types.ts";
import { FieldValue } from "./FieldValue.tsx";
import {
  BACK_PARAM,
  chosenFilterValues,
  DEFAULT_PAGE_SIZE,
  filterValues,
  hasPreviousPage,
  listVariables,
  nextPageParams,
  nextPosition,
  pagingPlan,
  paramName,
  previousPageParams,
  RANGE_PARAM,
  type RangeChoice,
  rangeChoice,
} from "./listState.ts";
import { TimeRangeControl } from "./TimeRangeControl.tsx";
import { VirtualRows } from "./VirtualRows.tsx";

type Row = Record<string, unknown>;
const features = tableFeatures({ rowSelectionFeature });
/** Above this many rows on one page the list renders only the rows in view. */
export const VIRTUAL_THRESHOLD = 100;
const PAGE_SIZES = [10, 25, 50, 100, 250, 500];

/** The descending twin of an ascending orderBy value (`LABEL_ASC` → `LABEL_DESC`). */
export function descending(value: string): string {
  return value.replace(/_ASC$/, "_DESC");
}

function FilterControl({
  filter,
  value,
  onChange,
  options,
  loading,
}: {
  filter: Filter;
  value: string[];
  onChange: (next: string[]) => void;
  options: { value: unknown; label: ReactNode; disabled?: boolean }[];
  loading?: boolean;
}) {
  return (
    <Select
      aria-label={filter.label}
      data-filter={filter.variable}
      mode={filter.multiple ? "multiple" : undefined}
      allowClear
      loading={loading}
      placeholder={filter.label}
      style={{ minWidth: 180 }}
      maxTagCount="responsive"
      value={filter.multiple ? value : value[0]}
      onChange={(next: string | string[] | undefined) =>
        onChange(next === undefined ? [] : Array.isArray(next) ? next : [next])
      }
      options={options.map((option) => ({ ...option, value: String(option.value) }))}
    />
  );
}

function RemoteFilter(props: {
  filter: Filter;
  source: OptionsSource;
  value: string[];
  onChange: (next: string[]) => void;
  scope: Scope;
}) {
  const { options, loading } = useRemoteOptions(props.source, props.scope);
  return <FilterControl {...props} options={options} loading={loading} />;
}

export function ListView({ view, scope }: { view: ListViewSpec; scope: Scope }) {
  const { registry, viewer } = useData();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const { message, modal } = App.useApp();
  const refresh = useRefresh();
  const runOperation = useRunOperation();
  const entity = view.entity ? registry.schemas[view.entity] : undefined;
  const param = (name: string) => paramName(view, name);
  const plan = pagingPlan(view);
  const [searchText, setSearchText] = useState(view.search ? (params.get(param(view.search.variable)) ?? "") : "");
  // A relative time range ends at `now`, fixed until the range changes or the viewer refreshes, so the
  // variables (and the cache key) stay stable between renders.
  const [now, setNow] = useState(() => Date.now());
  const rangeKey = view.timeRange ? JSON.stringify(rangeChoice(view, params)) : "";
  const [rangeSeen, setRangeSeen] = useState(rangeKey);
  if (rangeSeen !== rangeKey) {
    setRangeSeen(rangeKey);
    setNow(Date.now());
  }

  const variables = useMemo(() => listVariables(view, scope, params, now), [view, scope, params, now]);
  const variablesKey = JSON.stringify(variables);
  // The selection belongs to one page and one set of filters; another page starts with none.
  const [selection, setSelection] = useState<{ key: string; rows: Record<string, true> }>({ key: "", rows: {} });
  const rowSelection = selection.key === variablesKey ? selection.rows : {};
  const setRowSelection = (rows: Record<string, true>) => setSelection({ key: variablesKey, rows });
  const sortValue = view.sort ? (variables[view.sort.variable] as string | undefined) : undefined;
  const pageSize = plan ? (variables[plan.size] as number) : DEFAULT_PAGE_SIZE;

  const result = useOperation(view.query, variables);
  const rows = useMemo(() => {
    const found = result.data ? getPath(result.data, view.rows) : [];
    return (Array.isArray(found) ? found : []) as Row[];
  }, [result.data, view.rows]);
  const total = plan?.total && result.data ? (getPath(result.data, plan.total) as number | undefined) : undefined;
  const next = plan && result.data ? nextPosition(plan, result.data) : null;

  /** Sets URL parameters; any change but a page move starts again at the first page. */
  const update = (changes: Record<string, string | string[] | null>) => {
    const out = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      out.delete(param(key));
      for (const entry of Array.isArray(value) ? value : value ? [value] : []) out.append(param(key), entry);
    }
    if (plan) {
      out.delete(param(plan.position));
      out.delete(param(BACK_PARAM));
    }
    setParams(out);
  };

  const rowKey = (row: Row, index: number) => String(getPointer(row, view.rowKey ?? "/id") ?? index);

  const columns = useMemo<ColumnDef<typeof features, Row>[]>(
    () =>
      view.columns.map((field, index) => ({
        id: field.field || String(index),
        header: labelFor(field, fieldSchema(entity, field.field)),
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
    [view.columns, entity, scope],
  );

  const table = useTable({
    features,
    columns,
    data: rows,
    getRowId: (row: Row, index: number) => rowKey(row, index),
    enableRowSelection: Boolean(view.bulkActions?.length),
    state: { rowSelection },
    onRowSelectionChange: (updater) =>
      setRowSelection((typeof updater === "function" ? updater(rowSelection) : updater) as Record<string, true>),
  });

  const modelRows = table.getRowModel().rows;
  // Selection only helps someone who may run at least one bulk action.
  const selectable = (view.bulkActions ?? []).some((action) =>
    can(viewer.userRole, requiredRole(action.role, Boolean(action.mutation))),
  );
  const selectedRows = modelRows.filter((row) => rowSelection[row.id]).map((row) => row.original);
  const leafColumns = table.getAllLeafColumns();
  const rowActions = view.rowActions ?? [];
  const hasFilters = Boolean(
    (view.search && params.get(param(view.search.variable))) ||
      (view.filters ?? []).some((filter) => chosenFilterValues(view, filter, params).length),
  );

  const antColumns = [
    ...leafColumns.map((column, index) => {
      const field = view.columns[index];
      const sortable = field.sortable;
      const sortOrder: SortOrder | undefined = sortable
        ? sortValue === sortable
          ? "ascend"
          : sortValue === descending(sortable)
            ? "descend"
            : null
        : undefined;
      return {
        key: column.id,
        dataIndex: column.id,
        width: field.width,
        title: String(column.columnDef.header ?? ""),
        sorter: Boolean(sortable),
        sortOrder,
        sortDirections: ["ascend", "descend"] as SortOrder[],
        render: (_: unknown, row: (typeof modelRows)[number]) => {
          const cell = row.getAllCells().find((candidate) => candidate.column.id === column.id);
          return cell ? flexRender(cell.column.columnDef.cell, cell.getContext()) : null;
        },
      };
    }),
    ...(rowActions.length
      ? [
          {
            key: "__actions",
            title: <span className="np-sr-only">Actions</span>,
            align: "right" as const,
            fixed: "right" as const,
            render: (_: unknown, row: (typeof modelRows)[number]) => (
              <Actions
                actions={rowActions}
                subject={row.original}
                scope={{ ...scope, row: row.original }}
                mode="compact"
                size="small"
              />
            ),
          },
        ]
      : []),
  ];

  async function runBulk(action: Action) {
    const targets = selectedRows.filter((row) => actionState(action, viewer.userRole, row, { ...scope, row }).enabled);
    const go = async () => {
      let failed = 0;
      let lastError: unknown;
      for (const row of targets) {
        try {
          await runOperation(action.mutation as string, resolveVariables(action.variables, { ...scope, row }));
        } catch (error) {
          failed += 1;
          lastError = error;
        }
      }
      await refresh(action.refresh?.length ? action.refresh : [view.query]);
      setRowSelection({});
      if (failed) message.error(`${action.label}: ${failed} of ${targets.length} failed. ${errorMessage(lastError)}`);
      else message.success(`${action.label}: ${targets.length} done`);
    };
    if (action.confirm)
      modal.confirm({
        title: action.confirm.title,
        content: action.confirm.description ?? `This applies to ${targets.length} selected row(s).`,
        okText: action.confirm.okText ?? action.label,
        okButtonProps: { danger: action.confirm.danger },
        onOk: go,
      });
    else await go();
  }

  const toolbar = (
    <div className="np-list-toolbar">
      <Space wrap size={8}>
        {view.title ? (
          <Typography.Title level={5} style={{ margin: "0 8px 0 0" }}>
            {view.title}
          </Typography.Title>
        ) : null}
        {view.timeRange ? (
          <TimeRangeControl
            range={view.timeRange}
            choice={rangeChoice(view, params) as RangeChoice}
            onChoose={(choice) => {
              const range = view.timeRange as TimeRange;
              update(
                "preset" in choice
                  ? { [RANGE_PARAM]: choice.preset, [range.from]: null, [range.to]: null }
                  : { [RANGE_PARAM]: null, [range.from]: choice.from, [range.to]: choice.to },
              );
            }}
            onRefresh={() => {
              setNow(Date.now());
              void result.mutate();
            }}
          />
        ) : null}
        {view.search ? (
          <Input.Search
            allowClear
            aria-label="Search"
            placeholder={view.search.placeholder ?? "Search"}
            value={searchText}
            onChange={(event) => setSearchText(event.target.value)}
            onSearch={(text) => update({ [view.search?.variable as string]: text.trim() || null })}
            style={{ width: 260 }}
          />
        ) : null}
        {(view.filters ?? []).map((filter) => {
          const onChange = (next: string[]) => update({ [filter.variable]: next });
          const value = filterValues(view, filter, params);
          if (filter.options && !Array.isArray(filter.options))
            return (
              <RemoteFilter
                key={filter.variable}
                filter={filter}
                source={filter.options}
                value={value}
                onChange={onChange}
                scope={scope}
              />
            );
          const filterSchema = filter.field ? fieldSchema(entity, filter.field) : undefined;
          const options: StaticOption[] = Array.isArray(filter.options)
            ? filter.options
            : (filterSchema?.enum ?? []).map((entry) => ({
                value: entry as string,
                label: enumLabel(filterSchema, String(entry)),
              }));
          return (
            <FilterControl key={filter.variable} filter={filter} value={value} onChange={onChange} options={options} />
          );
        })}
        {hasFilters ? (
          <Button
            type="link"
            onClick={() => {
              setSearchText("");
              update(
                Object.fromEntries([
                  ...(view.search ? [[view.search.variable, null]] : []),
                  ...(view.filters ?? []).map((filter) => [filter.variable, null]),
                ]),
              );
            }}
          >
            Clear filters
          </Button>
        ) : null}
      </Space>
      <Actions actions={view.toolbar} scope={scope} />
    </div>
  );

  const bulkBar = selectedRows.length ? (
    <section className="np-bulk-bar" aria-label="Bulk actions">
      <Typography.Text strong>{selectedRows.length} selected</Typography.Text>
      <Space size={8}>
        {(view.bulkActions ?? []).map((action) => {
          const enabled = selectedRows.some(
            (row) => actionState(action, viewer.userRole, row, { ...scope, row }).enabled,
          );
          return (
            <Button
              key={action.id ?? action.label}
              size="small"
              icon={icon(action.icon)}
              danger={action.danger || action.confirm?.danger}
              disabled={!enabled}
              onClick={() => void runBulk(action)}
            >
              {action.label}
            </Button>
          );
        })}
        <Button size="small" type="link" onClick={() => setRowSelection({})}>
          Clear selection
        </Button>
      </Space>
    </section>
  ) : null;

  const empty = (
    <Empty
      image={Empty.PRESENTED_IMAGE_SIMPLE}
      description={
        hasFilters ? (
          "Nothing matches these filters."
        ) : (
          <Space orientation="vertical" size={2}>
            <Typography.Text strong>{view.empty?.title ?? "Nothing here yet"}</Typography.Text>
            {view.empty?.description ? (
              <Typography.Text type="secondary">{view.empty.description}</Typography.Text>
            ) : null}
          </Space>
        )
      }
    >
      {!hasFilters && view.toolbar?.length ? (
        <Actions actions={view.toolbar.filter((action) => action.primary)} scope={scope} />
      ) : null}
    </Empty>
  );

  const onRowOpen = view.rowLink ? (row: Row) => navigate(fillTemplate(view.rowLink as string, row, true)) : undefined;

  const pager = plan ? (
    <div className="np-pager">
      <Typography.Text type="secondary">
        {total !== undefined ? `${total.toLocaleString("en")} total` : null}
        {total !== undefined && rows.length ? " · " : null}
        {rows.length ? `showing ${rows.length}` : null}
      </Typography.Text>
      <Space size={8}>
        <Select
          size="small"
          aria-label="Rows per page"
          value={pageSize}
          onChange={(size) => update({ pageSize: String(size) })}
          options={PAGE_SIZES.map((size) => ({ value: size, label: `${size} / page` }))}
        />
        <Button
          size="small"
          disabled={!hasPreviousPage(view, params)}
          onClick={() => setParams(previousPageParams(view, params))}
        >
          Previous
        </Button>
        <Button size="small" disabled={!next} onClick={() => next && setParams(nextPageParams(view, params, next))}>
          Next
        </Button>
      </Space>
    </div>
  ) : null;

  return (
    <div className="np-list" data-view="list">
      {view.title || view.search || view.filters?.length || view.timeRange || view.toolbar?.length ? toolbar : null}
      {bulkBar}
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
        <Skeleton active title={false} paragraph={{ rows: 5 }} className="np-list-skeleton" />
      ) : rows.length > VIRTUAL_THRESHOLD ? (
        <VirtualRows table={table} view={view} onRowOpen={onRowOpen} actions={rowActions} scope={scope} />
      ) : (
        <Table
          size="middle"
          rowKey="id"
          loading={result.isValidating && !result.isLoading}
          dataSource={modelRows}
          columns={antColumns}
          pagination={false}
          locale={{ emptyText: empty }}
          rowSelection={
            selectable
              ? {
                  selectedRowKeys: Object.keys(rowSelection).filter((key) => rowSelection[key]),
                  onChange: (keys) =>
                    setRowSelection(Object.fromEntries(keys.map((key) => [String(key), true as const]))),
                }
              : undefined
          }
          onChange={(_pagination, _filters, sorter) => {
            if (!view.sort) return;
            const one = Array.isArray(sorter) ? sorter[0] : sorter;
            const field = view.columns.find((column, index) => (column.field || String(index)) === one?.columnKey);
            const next =
              field?.sortable && one?.order
                ? one.order === "ascend"
                  ? field.sortable
                  : descending(field.sortable)
                : null;
            update({ [view.sort.variable]: next });
          }}
          onRow={(row) =>
            onRowOpen
              ? {
                  onClick: (event) => {
                    if ((event.target as HTMLElement).closest("a,button,input,.ant-dropdown,.ant-checkbox-wrapper"))
                      return;
                    onRowOpen(row.original);
                  },
                  style: { cursor: "pointer" },
                }
              : {}
          }
          scroll={{ x: "max-content" }}
        />
      )}
      {pager}
    </div>
  );
}
