// A list filter's select (antd's Select, with its options from the entity schema's enum, the manifest or
// a named query). Its code, and a named query's options, load when someone first opens a filter, or
// when the page opens with the filter set (ListToolbar.tsx draws a light button until then).
import { Select } from "antd";
import type { ReactNode } from "react";
import { useRemoteOptions } from "../form/RemoteOptions.tsx";
import type { Scope } from "../resolve.ts";
import type { Filter, OptionsSource } from "../types.ts";

export interface FilterSelectProps {
  filter: Filter;
  value: string[];
  onChange: (next: string[]) => void;
  /** Opened by the person (rather than drawn for a value in the address): open, with focus in it. */
  open: boolean;
}

function FilterSelect({
  filter,
  value,
  onChange,
  options,
  loading,
  open,
}: FilterSelectProps & { options: { value: unknown; label: ReactNode; disabled?: boolean }[]; loading?: boolean }) {
  return (
    <Select
      aria-label={filter.label}
      data-filter={filter.variable}
      mode={filter.multiple ? "multiple" : undefined}
      allowClear
      loading={loading}
      placeholder={filter.label}
      className="np-filter"
      maxTagCount="responsive"
      autoFocus={open}
      defaultOpen={open}
      value={filter.multiple ? value : value[0]}
      onChange={(next: string | string[] | undefined) =>
        onChange(next === undefined ? [] : Array.isArray(next) ? next : [next])
      }
      options={options.map((option) => ({ ...option, value: String(option.value) }))}
    />
  );
}

function RemoteFilterSelect(props: FilterSelectProps & { source: OptionsSource; scope: Scope }) {
  const { options, loading } = useRemoteOptions(props.source, props.scope);
  return <FilterSelect {...props} options={options} loading={loading} />;
}

export default function ListFilterSelect(
  props: FilterSelectProps & {
    /** Options listed in the manifest or the schema's enum. */
    options?: { value: unknown; label: ReactNode }[];
    /** Options from a named query. */
    source?: OptionsSource;
    scope: Scope;
  },
) {
  return props.source ? (
    <RemoteFilterSelect {...props} source={props.source} />
  ) : (
    <FilterSelect {...props} options={props.options ?? []} />
  );
}
