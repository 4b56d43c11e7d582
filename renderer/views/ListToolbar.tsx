// A list's toolbar: its title, time range, search, filters (static, from the entity schema's enum, or
// from a named query), "Clear filters" and the toolbar actions. Every choice goes to the URL.
import { Button, Input, Select, Space, Typography } from "antd";
import { type ReactNode, useState } from "react";
import { Actions } from "../actions.tsx";
import { useData } from "../data.tsx";
import { useRemoteOptions } from "../form/RemoteOptions.tsx";
import type { Scope } from "../resolve.ts";
import { enumLabel, fieldSchema } from "../schema.ts";
import type { Filter, JsonSchema, ListView, OptionsSource, StaticOption, TimeRange } from "../types.ts";
import { filterValues, paramName, RANGE_PARAM, type RangeChoice, rangeChoice } from "./listState.ts";
import { TimeRangeControl } from "./TimeRangeControl.tsx";
import type { ListState } from "./useListState.ts";

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
            onRefresh={state.reload}
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
          const filterSchema = filter.field ? fieldSchema(entity, filter.field, registry.schemas) : undefined;
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
