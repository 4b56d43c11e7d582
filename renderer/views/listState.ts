// What a list asks its query for, read from the URL: search, filters, sort, the page (a cursor or a
// token, with the stack of earlier pages so Previous survives a reload) and the time range. Pure, so
// it is tested without React.
import { getPath, resolveVariables, type Scope } from "../resolve.ts";
import type { Filter, ListView, TimeRange } from "../types.ts";

export const DEFAULT_PAGE_SIZE = 25;
export const DEFAULT_PRESETS = ["15m", "1h", "24h", "7d"];
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
const UNIT_WORDS: Record<string, [string, string]> = {
  m: ["minute", "minutes"],
  h: ["hour", "hours"],
  d: ["day", "days"],
};

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
/** The URL parameter holding a time-range preset. */
export const RANGE_PARAM = "range";

/** `15m` → 15 minutes in ms; null when it is not a duration. */
export function presetMs(preset: string): number | null {
  const match = /^(\d+)([mhd])$/.exec(preset);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : null;
}

/** `1h` → "Last hour", `24h` → "Last 24 hours". */
export function presetLabel(preset: string): string {
  const match = /^(\d+)([mhd])$/.exec(preset);
  if (!match) return preset;
  const count = Number(match[1]);
  const [one, many] = UNIT_WORDS[match[2]];
  return count === 1 ? `Last ${one}` : `Last ${count} ${many}`;
}

/** The chosen range as the URL holds it: a preset, or a custom from/to (ISO strings). */
export type RangeChoice = { preset: string } | { from: string; to: string };

export function rangeChoice(view: ListView, params: URLSearchParams): RangeChoice | undefined {
  const range = view.timeRange;
  if (!range) return undefined;
  const from = params.get(paramName(view, range.from));
  const to = params.get(paramName(view, range.to));
  if (range.custom !== false && from && to && !Number.isNaN(Date.parse(from)) && !Number.isNaN(Date.parse(to)))
    return { from, to };
  const presets = range.presets ?? DEFAULT_PRESETS;
  const preset = params.get(paramName(view, RANGE_PARAM));
  if (preset && presets.includes(preset)) return { preset };
  return { preset: range.default ?? (presets.includes("24h") ? "24h" : presets[0]) };
}

/** from/to of a choice at `now` (ms); a preset ends now. */
export function rangeBounds(choice: RangeChoice, now: number): { from: string; to: string } {
  if ("from" in choice) return { from: new Date(choice.from).toISOString(), to: new Date(choice.to).toISOString() };
  const span = presetMs(choice.preset) ?? UNIT_MS.d;
  return { from: new Date(now - span).toISOString(), to: new Date(now).toISOString() };
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
    const bounds = rangeBounds(choice, now);
    out[view.timeRange.from] = bounds.from;
    out[view.timeRange.to] = bounds.to;
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

export type { TimeRange };
