// `stream-start-block`: an rjsf control for where a stream starts: a block number, or the chain tip
// when it is first activated (stored as -1, as the API takes it). Typing a number while Latest block is
// ticked chooses that block: one step, not two.
import type { WidgetProps } from "@rjsf/utils";
import { Checkbox, InputNumber, Space } from "antd";

export const LATEST = -1;

export function StartBlock({ id, value, onChange, disabled, readonly, placeholder }: WidgetProps) {
  const latest = value === LATEST;
  return (
    <Space wrap>
      <InputNumber
        id={id}
        min={0}
        precision={0}
        style={{ width: 200 }}
        placeholder={placeholder || "Block number"}
        disabled={disabled || readonly}
        value={latest || value === undefined || value === null ? null : Number(value)}
        onChange={(next) => onChange(typeof next === "number" ? next : undefined)}
      />
      <Checkbox
        checked={latest}
        disabled={disabled || readonly}
        onChange={(event) => onChange(event.target.checked ? LATEST : undefined)}
      >
        Latest block (the chain tip when first activated)
      </Checkbox>
    </Space>
  );
}
