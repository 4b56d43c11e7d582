// The time-range control of a list, or of a screen over all its views: presets (last 15 minutes, hour,
// 24 hours, 7 days, or all time) and a custom range, written to the URL by its owner (a preset as
// `range`, a custom range as the from/to names).
import { ReloadOutlined } from "@ant-design/icons";
import { Button, Select, Space, Tooltip } from "antd";
import { lazy, Suspense, useState } from "react";
import type { TimeRange } from "../types.ts";
import { DEFAULT_PRESETS, presetLabel, type RangeChoice } from "./rangeState.ts";

const CUSTOM = "custom";
const CustomRangePicker = lazy(() => import("./CustomRangePicker.tsx"));

function shortDate(iso: string): string {
  return new Date(iso).toLocaleString("en", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function TimeRangeControl({
  range,
  choice,
  onChoose,
  onRefresh,
}: {
  range: TimeRange;
  choice: RangeChoice;
  onChoose: (choice: RangeChoice) => void;
  onRefresh: () => void;
}) {
  const [picking, setPicking] = useState(false);
  const presets = range.presets ?? DEFAULT_PRESETS;
  const isCustom = "from" in choice;
  const options = [
    ...presets.map((preset) => ({ value: preset, label: presetLabel(preset) })),
    ...(range.custom === false
      ? []
      : [
          {
            value: CUSTOM,
            label: isCustom ? `${shortDate(choice.from)} – ${shortDate(choice.to)}` : "Custom range…",
          },
        ]),
  ];
  return (
    <Space size={4} data-filter="time-range">
      <Select
        aria-label="Time range"
        style={{ minWidth: 170 }}
        popupMatchSelectWidth={false}
        value={isCustom ? CUSTOM : choice.preset}
        onChange={(value: string) => (value === CUSTOM ? setPicking(true) : onChoose({ preset: value }))}
        onSelect={(value: string) => value === CUSTOM && setPicking(true)}
        options={options}
      />
      {picking ? (
        <Suspense fallback={null}>
          <CustomRangePicker onPicked={onChoose} onClose={() => setPicking(false)} />
        </Suspense>
      ) : null}
      {isCustom ? null : (
        <Tooltip title="Refresh: move the range to end now">
          <Button aria-label="Refresh" icon={<ReloadOutlined />} onClick={onRefresh} />
        </Tooltip>
      )}
    </Space>
  );
}
