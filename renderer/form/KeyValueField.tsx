// The `key-value` field for an object of string values (`additionalProperties: { type: "string" }`),
// such as HTTP headers: one row per entry with a name, a value and a remove button, and an "Add" button
// named after the field. Entries with an empty name are kept while being typed and dropped from the value.
// A name the schema's `propertyNames.pattern` refuses, and a value with errors of its own, are marked on
// their row and listed under the rows by name (the field template shows the field's own message once).
import { DeleteOutlined, PlusOutlined } from "@ant-design/icons";
import type { FieldProps } from "@rjsf/utils";
import { Button, Input, Space, Typography } from "antd";
import { useEffect, useState } from "react";

type Row = { name: string; value: string };

function rowsOf(data: unknown): Row[] {
  if (!data || typeof data !== "object" || Array.isArray(data)) return [];
  return Object.entries(data as Record<string, unknown>).map(([name, value]) => ({
    name,
    value: value === undefined || value === null ? "" : String(value),
  }));
}

function objectOf(rows: Row[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const row of rows) if (row.name.trim()) out[row.name.trim()] = row.value;
  return out;
}

export function KeyValueField(props: FieldProps) {
  const [rows, setRows] = useState<Row[]>(() => rowsOf(props.formData));
  const title = props.uiSchema?.["ui:title"] ?? props.schema.title ?? props.name;
  const singular = String(props.uiSchema?.["ui:options"]?.itemLabel ?? "entry");
  const disabled = props.disabled || props.readonly;
  const namePattern = (props.schema.propertyNames as { pattern?: string } | undefined)?.pattern;
  const allowedName = namePattern ? new RegExp(namePattern, "u") : null;
  const childErrors = props.errorSchema as Record<string, { __errors?: string[] }> | undefined;
  const checked = rows.map((row) => {
    const name = row.name.trim();
    return {
      nameRefused: allowedName !== null && name !== "" && !allowedName.test(name),
      valueErrors: (childErrors?.[name]?.__errors ?? []).filter(Boolean),
    };
  });
  const listed = rows.flatMap((row, index) => [
    ...(checked[index].nameRefused ? [`${row.name.trim()}: this name is not allowed`] : []),
    ...checked[index].valueErrors.map((message) => `${row.name.trim()}: ${message}`),
  ]);

  // Data replaced from outside (a reset, initial data arriving) replaces the rows.
  const external = JSON.stringify(objectOf(rowsOf(props.formData)));
  useEffect(() => {
    setRows((current) => (JSON.stringify(objectOf(current)) === external ? current : rowsOf(JSON.parse(external))));
  }, [external]);

  const change = (next: Row[]) => {
    setRows(next);
    const value = objectOf(next);
    props.onChange(Object.keys(value).length ? value : undefined, props.fieldPathId.path);
  };

  return (
    <div className="np-key-value" data-field="key-value" id={props.fieldPathId.$id}>
      <Typography.Text>{title}</Typography.Text>
      {props.schema.description ? (
        <Typography.Paragraph type="secondary" style={{ marginBottom: 8 }}>
          {props.schema.description}
        </Typography.Paragraph>
      ) : null}
      <Space orientation="vertical" style={{ width: "100%", marginTop: 8 }}>
        {rows.map((row, index) => (
          // Rows have no identity but their position while they are edited.
          // biome-ignore lint/suspicious/noArrayIndexKey: see above
          <Space.Compact key={index} style={{ width: "100%" }}>
            <Input
              aria-label={`${title} ${index + 1} name`}
              placeholder="Name"
              value={row.name}
              disabled={disabled}
              status={checked[index].nameRefused ? "error" : undefined}
              style={{ width: "40%" }}
              onChange={(event) => change(rows.map((r, i) => (i === index ? { ...r, name: event.target.value } : r)))}
            />
            <Input
              aria-label={`${title} ${index + 1} value`}
              placeholder="Value"
              value={row.value}
              disabled={disabled}
              status={checked[index].valueErrors.length ? "error" : undefined}
              onChange={(event) => change(rows.map((r, i) => (i === index ? { ...r, value: event.target.value } : r)))}
            />
            <Button
              aria-label={`Remove ${title} ${index + 1}`}
              icon={<DeleteOutlined />}
              disabled={disabled}
              onClick={() => change(rows.filter((_, i) => i !== index))}
            />
          </Space.Compact>
        ))}
        <Button icon={<PlusOutlined />} disabled={disabled} onClick={() => setRows([...rows, { name: "", value: "" }])}>
          {`Add ${singular}`}
        </Button>
      </Space>
      {listed.map((message) => (
        <Typography.Text key={message} type="danger" style={{ display: "block" }}>
          {message}
        </Typography.Text>
      ))}
    </div>
  );
}
