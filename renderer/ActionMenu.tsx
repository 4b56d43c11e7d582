// A row's further actions in antd's dropdown menu. It loads when someone first opens the menu
// (actions.tsx draws the same "More actions" button until then), and opens at once.
import { Button, Dropdown, Tooltip } from "antd";
import { useEffect, useRef, useState } from "react";
import type { ActionState } from "./actions.tsx";
import { icon } from "./icons.tsx";
import type { Action } from "./types.ts";

export default function ActionMenu({
  entries,
  size,
  onRun,
  focusButton,
}: {
  entries: { action: Action; state: ActionState }[];
  size: "small" | "middle";
  onRun: (action: Action) => void;
  /** The button that asked for the menu had focus: its replacement takes it. */
  focusButton: boolean;
}) {
  const [open, setOpen] = useState(true);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (focusButton) button.current?.focus();
  }, [focusButton]);
  const items = entries.map(({ action, state }) => ({
    key: action.id ?? action.label,
    label: state.reason ? (
      <Tooltip title={state.reason}>
        {action.label}
        <span className="np-sr-only">{` (${state.reason})`}</span>
      </Tooltip>
    ) : (
      action.label
    ),
    icon: icon(action.icon),
    danger: action.danger || action.confirm?.danger,
    disabled: !state.enabled,
    onClick: () => {
      setOpen(false);
      onRun(action);
    },
  }));
  return (
    <Dropdown trigger={["click"]} open={open} onOpenChange={setOpen} menu={{ items }}>
      <Button ref={button} size={size} type="text" icon={icon("more")} aria-label="More actions" />
    </Dropdown>
  );
}
