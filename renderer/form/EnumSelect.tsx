// rjsf's SelectWidget for enums, without the blank first option rjsf's antd theme adds when a field
// has no default: an empty choice is not a value. A field that may be left empty gets a clear button
// instead; one with no value yet shows a placeholder.
import {
  ariaDescribedByIds,
  enumOptionSelectedValue,
  enumOptionValueDecoder,
  enumOptionValueEncoder,
  getOptionValueFormat,
  type WidgetProps,
} from "@rjsf/utils";
import { Select } from "antd";

export function EnumSelect(props: WidgetProps) {
  const { id, options, value, required, disabled, readonly, placeholder, multiple, autofocus } = props;
  const { enumOptions = [], enumDisabled, emptyValue } = options;
  const format = getOptionValueFormat(options);
  const decode = (next: unknown) => enumOptionValueDecoder(next as string | string[], enumOptions, format, emptyValue);
  return (
    <Select
      id={id}
      autoFocus={autofocus}
      mode={multiple ? "multiple" : undefined}
      disabled={disabled || readonly}
      placeholder={placeholder || "Choose one"}
      allowClear={!required}
      style={{ width: "100%" }}
      value={enumOptionSelectedValue(value, enumOptions, Boolean(multiple), format, emptyValue)}
      onChange={(next) => props.onChange(next === undefined ? emptyValue : decode(next))}
      onBlur={() => props.onBlur(id, value)}
      onFocus={() => props.onFocus(id, value)}
      aria-describedby={ariaDescribedByIds(id)}
      options={enumOptions.map((option, index) => ({
        key: String(index),
        value: enumOptionValueEncoder(option.value, index, format),
        label: option.label,
        disabled: Array.isArray(enumDisabled) && enumDisabled.includes(option.value),
      }))}
    />
  );
}
