// The `tags-input` edit control for an array of strings: type a value and press Enter (or comma) to
// add it, click × to remove it. Suggestions may come from `ui:options.suggestions` (a list of strings).
import type { WidgetProps } from "@rjsf/utils";
import { Select } from "antd";

export function TagsInputWidget(props: WidgetProps) {
  // rjsf fills an array up to its minItems with empty items; those are not values yet.
  const value = Array.isArray(props.value)
    ? (props.value as unknown[]).filter((entry) => entry !== undefined && entry !== null && entry !== "").map(String)
    : [];
  const suggestions = Array.isArray(props.options.suggestions) ? (props.options.suggestions as unknown[]) : [];
  return (
    <Select
      id={props.id}
      mode="tags"
      value={value}
      tokenSeparators={[",", " "]}
      disabled={props.disabled || props.readonly}
      placeholder={props.placeholder || "Type a value and press Enter"}
      status={props.rawErrors?.length ? "error" : undefined}
      open={suggestions.length ? undefined : false}
      suffixIcon={null}
      onChange={(next: string[]) => props.onChange(next.map((entry) => entry.trim()).filter(Boolean))}
      onBlur={() => props.onBlur(props.id, value)}
      onFocus={() => props.onFocus(props.id, value)}
      options={suggestions.map((entry) => ({ value: String(entry), label: String(entry) }))}
    />
  );
}
