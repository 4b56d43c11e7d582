// The `text-suggestions` edit control: a text field (a URL, a name) that offers the rows of a named
// query as its first choices, and a mutation that makes a new one in one step and fills the field with
// it. `ui:options` is a suggestionsSource: { query, variables, rows, value, label, create }. While the
// field is empty and the query has no rows, the create offer comes first, above the field.
import type { WidgetProps } from "@rjsf/utils";
import { Alert, AutoComplete, Button, Space, Typography } from "antd";
import { useMemo, useState } from "react";
import { useData, useOperation, useRefresh, useRunOperation } from "../data.tsx";
import { getPath, getPointer, resolveVariables, type Scope } from "../resolve.ts";
import type { SuggestionsSource } from "../types.ts";
import { errorMessage } from "../useOperationRun.ts";
import type { FormContext } from "./fieldErrors.ts";

const isEmpty = (value: unknown) => value === undefined || value === null || value === "";

export function TextSuggestionsWidget(props: WidgetProps) {
  const { viewer } = useData();
  const source = props.options as unknown as SuggestionsSource;
  const formData = (props.registry.formContext as FormContext | undefined)?.formData ?? {};
  const scope = useMemo<Scope>(() => ({ form: formData, viewer }), [formData, viewer]);
  const variables = useMemo(() => resolveVariables(source.variables, scope), [source, scope]);
  const result = useOperation(source.query, variables);
  const runOperation = useRunOperation();
  const refresh = useRefresh();
  const [creating, setCreating] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const { value, onChange } = props;

  const suggestions = useMemo(() => {
    const rows = getPath(result.data, source.rows);
    return (Array.isArray(rows) ? rows : []).map((row) => {
      const text = String(getPointer(row, source.value) ?? "");
      const label = String(getPointer(row, source.label) ?? text);
      return {
        value: text,
        label: (
          <span className="np-option-described">
            {label}
            <Typography.Text type="secondary" className="np-option-description">
              {text}
            </Typography.Text>
          </span>
        ),
      };
    });
  }, [result.data, source]);

  const create = source.create;
  const makeOne = async () => {
    if (!create) return;
    setCreating(true);
    setFailure(null);
    try {
      const made = await runOperation(create.mutation, resolveVariables(create.variables, scope));
      onChange(String(getPath(made, create.value) ?? ""));
      await refresh([source.query, ...(create.refresh ?? [])]);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setCreating(false);
    }
  };

  const offer =
    create && isEmpty(value) && !result.isLoading && !props.disabled && !props.readonly ? (
      <Space size={8} wrap>
        <Button onClick={makeOne} loading={creating} data-create-suggestion>
          {create.label}
        </Button>
        {create.description ? <Typography.Text type="secondary">{create.description}</Typography.Text> : null}
      </Space>
    ) : null;
  // Nothing of the kind yet: making one is the first thing offered, above the field.
  const first = offer !== null && suggestions.length === 0;

  return (
    <div className="np-text-suggestions">
      {first ? <Alert type="info" showIcon={false} className="np-text-suggestions-first" message={offer} /> : null}
      <AutoComplete
        id={props.id}
        value={isEmpty(value) ? undefined : String(value)}
        options={suggestions}
        placeholder={props.placeholder}
        disabled={props.disabled || props.readonly}
        status={props.rawErrors?.length ? "error" : undefined}
        onChange={(next) => onChange(isEmpty(next) ? undefined : next)}
        onBlur={() => props.onBlur(props.id, value)}
        onFocus={() => props.onFocus(props.id, value)}
        style={{ width: "100%" }}
      />
      {offer && !first ? <div className="np-text-suggestions-more">{offer}</div> : null}
      {failure ? <Typography.Text type="danger">{failure}</Typography.Text> : null}
    </div>
  );
}
