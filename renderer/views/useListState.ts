// The state of a list view: what its query asks for (read from the URL), the page of rows it answered,
// the sort and the row selection, and the URL changes that move between them. The toolbar, bulk bar,
// pager and table read and change the list only through this.
import { useMemo, useState } from "react";
import { useSearchParams } from "react-router";
import { useOperation } from "../data.tsx";
import { useResultPathCheck } from "../faults.tsx";
import { getPath, getPointer, type Scope } from "../resolve.ts";
import type { Field, ListView } from "../types.ts";
import {
  BACK_PARAM,
  chosenFilterValues,
  DEFAULT_PAGE_SIZE,
  hasPreviousPage,
  listVariables,
  nextPageParams,
  nextPosition,
  pagingPlan,
  paramName,
  previousPageParams,
} from "./listState.ts";
import { useTimeRange } from "./useTimeRange.ts";

export type Row = Record<string, unknown>;
export type RowSelection = Record<string, true>;
/** How a column is sorted: ascending, descending, or not (null). */
export type SortOrder = "ascend" | "descend" | null;

/** The descending twin of an ascending orderBy value (`LABEL_ASC` → `LABEL_DESC`). */
export function descending(value: string): string {
  return value.replace(/_ASC$/, "_DESC");
}

export function useListState(view: ListView, scope: Scope) {
  const [params, setParams] = useSearchParams();
  const param = (name: string) => paramName(view, name);
  const plan = pagingPlan(view);
  const { now, renew } = useTimeRange(view.timeRange, params, param);

  const variables = useMemo(() => listVariables(view, scope, params, now), [view, scope, params, now]);
  const variablesKey = JSON.stringify(variables);
  // The selection belongs to one page and one set of filters; another page starts with none.
  const [selection, setSelection] = useState<{ key: string; rows: RowSelection }>({ key: "", rows: {} });
  const rowSelection = selection.key === variablesKey ? selection.rows : {};
  const setRowSelection = (rows: RowSelection) => setSelection({ key: variablesKey, rows });
  const sortValue = view.sort ? (variables[view.sort.variable] as string | undefined) : undefined;
  const pageSize = plan ? (variables[plan.size] as number) : DEFAULT_PAGE_SIZE;

  const result = useOperation(view.query, variables);
  const rows = useMemo(() => {
    const found = result.data ? getPath(result.data, view.rows) : [];
    return (Array.isArray(found) ? found : []) as Row[];
  }, [result.data, view.rows]);
  const rowsFault = useResultPathCheck(view.query, view.rows, result.data);
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

  /** How a column is sorted now: undefined when it cannot be sorted, null when it is not. */
  const sortOrderOf = (field: Field): SortOrder | undefined => {
    if (!field.sortable) return undefined;
    if (sortValue === field.sortable) return "ascend";
    if (sortValue === descending(field.sortable)) return "descend";
    return null;
  };

  /** Sorts by a column (ascending or descending), or by the service's default (null). */
  const sortBy = (field: Field | undefined, order: SortOrder | undefined) => {
    if (!view.sort) return;
    const value = field?.sortable && order ? (order === "ascend" ? field.sortable : descending(field.sortable)) : null;
    update({ [view.sort.variable]: value });
  };

  const hasFilters = Boolean(
    (view.search && params.get(param(view.search.variable))) ||
      (view.filters ?? []).some((filter) => chosenFilterValues(view, filter, params).length),
  );

  return {
    params,
    update,
    rows,
    /** The placeholder of a `rows` path the answer does not have (production; development throws). */
    rowsFault,
    result,
    rowKey: (row: Row, index: number) => String(getPointer(row, view.rowKey ?? "/id") ?? index),
    rowSelection,
    setRowSelection,
    sortOrderOf,
    sortBy,
    hasFilters,
    paging: plan
      ? {
          pageSize,
          total,
          hasPrevious: hasPreviousPage(view, params),
          hasNext: Boolean(next),
          setPageSize: (size: number) => update({ pageSize: String(size) }),
          previous: () => setParams(previousPageParams(view, params)),
          next: () => next && setParams(nextPageParams(view, params, next)),
        }
      : undefined,
    /** Fetches the page again; a relative time range moves to end now. */
    reload: () => {
      renew();
      void result.mutate();
    },
  };
}

export type ListState = ReturnType<typeof useListState>;
