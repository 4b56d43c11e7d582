// What a list asks its query for, read from the URL: search, filters, sort, the page (a cursor or a
// token, with the stack of earlier pages so Previous survives a reload) and the time range. Pure, so
// it is tested without React.
import { getPath, resolveVariables, type Scope } from "../resolve.ts";
import type { Filter, ListView } from "../types.ts";
import { type RangeChoice, rangeValues, readRangeChoice } from "./rangeState.ts";

export const DEFAULT_PAGE_SIZE = 25;

/** One shape for both paging modes: which variables carry the size and the position, where the next one is. */
export interface PagingPlan {
  size: string;
  position: string;
  next: string;
  hasNext?: string;
  total?: string;
  pageSize?: number;
}

export function pagingPlan(view: ListView): PagingPlan | undefined {
  const paging = view.paging;
  if (!paging) return undefined;
  if (paging.mode === "token")
    return {
      size: paging.size,
      position: paging.token,
      next: paging.next,
      total: paging.total,
      pageSize: paging.pageSize,
    };
  return {
    size: paging.first,
    position: paging.after,
    next: paging.endCursor,
    hasNext: paging.hasNextPage,
    total: paging.total,
    pageSize: paging.pageSize,
  };
}

/** The URL parameter names of a list: prefixed with the view's id when it has one. */
export function paramName(view: ListView, name: string): string {
  return view.id ? `${view.id}.${name}` : name;
}

/** The URL parameter holding the positions of the pages before this one (oldest first). */
export const BACK_PARAM = "back";

/** The time range the URL names for a list (its parameters prefixed like the list's others). */
export function rangeChoice(view: ListView, params: URLSearchParams): RangeChoice | undefined {
  return view.timeRange ? readRangeChoice(view.timeRange, params, (name) => paramName(view, name)) : undefined;
}

/** The values of a filter chosen in the URL (none when nothing is chosen). */
export function chosenFilterValues(view: ListView, filter: Filter, params: URLSearchParams): string[] {
  return params.getAll(paramName(view, filter.variable)).flatMap((entry) => entry.split(","));
}

/** The values a filter applies: those chosen in the URL, else its declared default. */
export function filterValues(view: ListView, filter: Filter, params: URLSearchParams): string[] {
  const chosen = chosenFilterValues(view, filter, params);
  return chosen.length || filter.default === undefined ? chosen : [String(filter.default)];
}

/** A filter value from the URL in the type its options declare (static options may be booleans or numbers). */
function typedValue(filter: Filter, value: string): unknown {
  if (!Array.isArray(filter.options)) return value;
  const match = filter.options.find((option) => String(option.value) === value);
  return match ? match.value : value;
}

/** The variables of a list's query for this URL, scope and time. */
export function listVariables(
  view: ListView,
  scope: Scope,
  params: URLSearchParams,
  now: number = Date.now(),
): Record<string, unknown> {
  const out: Record<string, unknown> = resolveVariables(view.variables, scope);
  if (view.search) {
    const text = params.get(paramName(view, view.search.variable));
    if (text) out[view.search.variable] = text;
  }
  for (const filter of view.filters ?? []) {
    const values = filterValues(view, filter, params).map((value) => typedValue(filter, value));
    if (values.length) out[filter.variable] = filter.multiple ? values : values[0];
  }
  if (view.sort) {
    const sort = params.get(paramName(view, view.sort.variable)) ?? view.sort.default;
    if (sort) out[view.sort.variable] = sort;
  }
  const plan = pagingPlan(view);
  if (plan) {
    out[plan.size] = Number(params.get(paramName(view, "pageSize"))) || plan.pageSize || DEFAULT_PAGE_SIZE;
    const position = params.get(paramName(view, plan.position));
    if (position) out[plan.position] = position;
  }
  const choice = rangeChoice(view, params);
  if (choice && view.timeRange) {
    for (const [name, value] of Object.entries(rangeValues(view.timeRange, choice, now))) if (value) out[name] = value;
  }
  return out;
}

/** Where the next page starts, and whether there is one, from a result. */
export function nextPosition(plan: PagingPlan, data: unknown): string | null {
  const next = getPath(data, plan.next);
  const more = plan.hasNext ? Boolean(getPath(data, plan.hasNext)) : true;
  return more && typeof next === "string" && next ? next : null;
}

/** URL changes that move to the next page: push the current position on the back stack. */
export function nextPageParams(view: ListView, params: URLSearchParams, next: string): URLSearchParams {
  const plan = pagingPlan(view) as PagingPlan;
  const out = new URLSearchParams(params);
  out.append(paramName(view, BACK_PARAM), params.get(paramName(view, plan.position)) ?? "");
  out.set(paramName(view, plan.position), next);
  return out;
}

/** URL changes that move to the previous page: pop the back stack. */
export function previousPageParams(view: ListView, params: URLSearchParams): URLSearchParams {
  const plan = pagingPlan(view) as PagingPlan;
  const out = new URLSearchParams(params);
  const back = params.getAll(paramName(view, BACK_PARAM));
  const previous = back.pop();
  out.delete(paramName(view, BACK_PARAM));
  for (const entry of back) out.append(paramName(view, BACK_PARAM), entry);
  if (previous) out.set(paramName(view, plan.position), previous);
  else out.delete(paramName(view, plan.position));
  return out;
}

/** Whether there is a page before this one. */
export function hasPreviousPage(view: ListView, params: URLSearchParams): boolean {
  const plan = pagingPlan(view);
  return Boolean(plan && params.get(paramName(view, plan.position)));
}
