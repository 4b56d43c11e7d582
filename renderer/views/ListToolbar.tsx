// A list's toolbar: its title, time range, search, filters (static, from the entity schema's enum, or
// from a named query), "Clear filters" and the toolbar actions. Every choice goes to the URL.
import { DownOutlined, SearchOutlined } from "@ant-design/icons";
import { Button, Space } from "antd";
import { type FormEvent, lazy, type ReactNode, Suspense, useState } from "react";
import { Actions } from "../actions.tsx";
import { useData } from "../data.tsx";
import type { Scope } from "../resolve.ts";
import { enumLabel, fieldSchema } from "../schema.ts";
import type { Filter, JsonSchema, ListView, StaticOption, TimeRange } from "../types.ts";
import { filterValues, paramName, rangeChoice } from "./listState.ts";
import { type RangeChoice, rangeChanges } from "./rangeState.ts";
import type { ListState } from "./useListState.ts";

// antd's Select (~22 kB gzip) loads when a filter is first opened, or when the page opens filtered; the
// time range (a select too) with the lists that have one.
const ListFilterSelect = lazy(() => import("./ListFilterSelect.tsx"));
const TimeRangeControl = lazy(() =>
  import("./TimeRangeControl.tsx").then((module) => ({ default: module.TimeRangeControl })),
);

/**
 * A filter: a button in the look of an empty select until it is first opened or holds a value, then
 * the select itself, opened with focus in it (the button stays while the select's code arrives).
 */
function FilterControl({
  filter,
  value,
  onChange,
  options,
  scope,
}: {
  filter: Filter;
  value: string[];
  onChange: (next: string[]) => void;
  options: { value: unknown; label: ReactNode }[] | undefined;
  scope: Scope;
}) {
  const [mode, setMode] = useState<"button" | "select" | "opened">(value.length ? "select" : "button");
  // A value chosen elsewhere (the address, Back) shows the select, which then stays.
  if (value.length && mode === "button") setMode("select");
  const button = (
    <button
      type="button"
      className="np-filter np-filter-button"
      aria-label={filter.label}
      aria-haspopup="listbox"
      aria-expanded={false}
      data-filter={filter.variable}
      onClick={() => setMode("opened")}
      onKeyDown={(event) => {
        if (event.key === "ArrowDown") {
          event.preventDefault();
          setMode("opened");
        }
      }}
    >
      <span className="np-filter-placeholder">{filter.label}</span>
      <DownOutlined aria-hidden="true" className="np-filter-caret" />
    </button>
  );
  if (mode === "button") return button;
  const source = filter.options && !Array.isArray(filter.options) ? filter.options : undefined;
  return (
    <Suspense fallback={button}>
      <ListFilterSelect
        filter={filter}
        value={value}
        onChange={onChange}
        open={mode === "opened"}
        options={options}
        source={source}
        scope={scope}
      />
    </Suspense>
  );
}

/** The search box: applied on Enter or its button; emptied, it clears the search at once. */
function SearchBox({
  placeholder,
  text,
  onText,
  onSearch,
}: {
  placeholder: string;
  text: string;
  onText: (text: string) => void;
  onSearch: (text: string) => void;
}) {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch(text);
  };
  return (
    <form className="np-search" onSubmit={submit}>
      <input
        type="search"
        aria-label="Search"
        placeholder={placeholder}
        value={text}
        onChange={(event) => {
          onText(event.target.value);
          if (!event.target.value) onSearch("");
        }}
      />
      {/* Not a submit button: Enter in the box submits the form (the only field), and a submit button
          would read as a change to the views that check which buttons write. */}
      <button type="button" aria-label="Search" onClick={() => onSearch(text)}>
        <SearchOutlined aria-hidden="true" />
      </button>
    </form>
  );
}

/** Whether a list shows a toolbar at all. */
export function hasToolbar(view: ListView): boolean {
  return Boolean(view.title || view.search || view.filters?.length || view.timeRange || view.toolbar?.length);
}

export function ListToolbar({
  view,
  scope,
  entity,
  state,
}: {
  view: ListView;
  scope: Scope;
  entity: JsonSchema | undefined;
  state: ListState;
}) {
  const { params, update } = state;
  const { registry } = useData();
  const [searchText, setSearchText] = useState(
    view.search ? (params.get(paramName(view, view.search.variable)) ?? "") : "",
  );
  return (
    <div className="np-list-toolbar">
      <Space wrap size={8}>
        {view.title ? <h2 className="np-list-title">{view.title}</h2> : null}
        {view.timeRange ? (
          <Suspense fallback={null}>
            <TimeRangeControl
              range={view.timeRange}
              choice={rangeChoice(view, params) as RangeChoice}
              onChoose={(choice) => update(rangeChanges(view.timeRange as TimeRange, choice))}
              onRefresh={state.reload}
            />
          </Suspense>
        ) : null}
        {view.search ? (
          <SearchBox
            placeholder={view.search.placeholder ?? "Search"}
            text={searchText}
            onText={setSearchText}
            onSearch={(text) => update({ [view.search?.variable as string]: text.trim() || null })}
          />
        ) : null}
        {(view.filters ?? []).map((filter) => {
          const filterSchema = filter.field ? fieldSchema(entity, filter.field, registry.schemas) : undefined;
          const options: StaticOption[] | undefined = Array.isArray(filter.options)
            ? filter.options
            : filter.options
              ? undefined
              : (filterSchema?.enum ?? []).map((entry) => ({
                  value: entry as string,
                  label: enumLabel(filterSchema, String(entry)),
                }));
          return (
            <FilterControl
              key={filter.variable}
              filter={filter}
              value={filterValues(view, filter, params)}
              onChange={(next) => update({ [filter.variable]: next })}
              options={options}
              scope={scope}
            />
          );
        })}
        {state.hasFilters ? (
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
}
