// The `remote-options` edit control: a select whose options come from a named query. Its
// `ui:options` say where: { query, variables, rows, value, label, detail, where, needs,
// disabledWhen, badges }.
// Variables and `where` may reference other fields of the form (`$form.kind`), so options can
// depend on an earlier choice (`needs` names it: until it is made the select is disabled and says
// so); a value that is no longer among the options is cleared.
import type { WidgetProps } from "@rjsf/utils";
import { Select, Space, Tag, Typography } from "antd";
import { useEffect, useMemo } from "react";
import { useParams } from "react-router";
import { useData, useOperation } from "../data.tsx";
import { evalPredicate, getPath, getPointer, resolveVariables, type Scope } from "../resolve.ts";
import type { OptionsSource } from "../types.ts";
import type { FormContext } from "./fieldErrors.ts";

export interface RemoteOption {
  value: unknown;
  label: string;
  /** What choosing it does, when the source names a `detail`. */
  description?: string;
  disabled: boolean;
  badges: { label: string; color?: string }[];
}

function textAt(row: unknown, pointer: string): string | undefined {
  const text = getPointer(row, pointer);
  return typeof text === "string" && text !== "" ? text : undefined;
}

const isEmpty = (value: unknown) => value === undefined || value === null || value === "";

/** Builds select options from a query result, as an options source describes. */
export function buildOptions(source: OptionsSource, data: unknown, scope: Scope): RemoteOption[] {
  const rows = getPath(data, source.rows);
  if (!Array.isArray(rows)) return [];
  return rows
    .filter((row) => evalPredicate(source.where, row, scope))
    .map((row) => ({
      value: getPointer(row, source.value),
      label: String(getPointer(row, source.label) ?? getPointer(row, source.value) ?? ""),
      description: source.detail ? textAt(row, source.detail) : undefined,
      disabled: source.disabledWhen ? evalPredicate(source.disabledWhen, row, scope) : false,
      badges: (source.badges ?? [])
        .filter((badge) => evalPredicate(badge.when, row, scope))
        .map(({ label, color }) => ({ label, color })),
    }));
}

/** Loads options for a source; returns them with the loading state and error. */
export function useRemoteOptions(source: OptionsSource | undefined, scope: Scope) {
  const variables = useMemo(() => resolveVariables(source?.variables, scope), [source, scope]);
  const result = useOperation(source?.query, variables);
  const options = useMemo(
    () => (source && result.data ? buildOptions(source, result.data, scope) : []),
    [source, result.data, scope],
  );
  return { options, loading: result.isLoading, error: result.error };
}

export function RemoteOptionsWidget(props: WidgetProps) {
  const { viewer } = useData();
  const source = props.options as unknown as OptionsSource;
  const formData = (props.registry.formContext as FormContext | undefined)?.formData ?? {};
  // The screen's route too, so options can depend on the page a form opens on ($route.slug).
  const route = useParams();
  const scope = useMemo<Scope>(() => ({ form: formData, viewer, route }), [formData, viewer, route]);
  const { options, loading, error } = useRemoteOptions(source, scope);
  const { value, onChange } = props;

  useEffect(() => {
    if (!loading && value !== undefined && value !== "" && !options.some((option) => option.value === value)) {
      onChange(undefined);
    }
  }, [loading, options, value, onChange]);

  const chosen = options.find((option) => option.value === value);
  const needed = source.needs;
  const waiting = needed !== undefined && isEmpty(formData[needed.field]);
  const placeholder = error
    ? "Could not load the options"
    : waiting
      ? needed.placeholder
      : props.placeholder || "Select…";
  const select = (
    <Select
      id={props.id}
      value={value === "" ? undefined : value}
      loading={loading}
      disabled={props.disabled || props.readonly || waiting}
      placeholder={placeholder}
      status={error || props.rawErrors?.length ? "error" : undefined}
      showSearch={{ optionFilterProp: "title" }}
      allowClear={!props.required}
      onChange={(next) => props.onChange(next ?? undefined)}
      onBlur={() => props.onBlur(props.id, value)}
      onFocus={() => props.onFocus(props.id, value)}
      notFoundContent={loading ? "Loading…" : "Nothing to choose"}
      options={options.map((option) => ({
        value: option.value as string,
        title: option.label,
        disabled: option.disabled,
        label: (
          <Space size={6}>
            <span>{option.label}</span>
            {option.badges.map((badge) => (
              <Tag key={badge.label} color={badge.color} style={{ marginInlineEnd: 0 }}>
                {badge.label}
              </Tag>
            ))}
          </Space>
        ),
        description: option.description,
      }))}
      // In the list each option says what it does; the chosen one shows only its label, its text is below.
      optionRender={(option) =>
        option.data.description ? (
          <div className="np-option-described">
            {option.label}
            <Typography.Text type="secondary" className="np-option-description">
              {option.data.description}
            </Typography.Text>
          </div>
        ) : (
          option.label
        )
      }
    />
  );
  if (!chosen?.description) return select;
  return (
    <div>
      {select}
      <Typography.Paragraph type="secondary" className="np-chosen-description" data-chosen-description>
        {chosen.description}
      </Typography.Paragraph>
    </div>
  );
}
