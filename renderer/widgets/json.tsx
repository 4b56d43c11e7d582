// The `json` read view: pretty-printed JSON (a string holding JSON is parsed first) with a copy
// button, collapsed to a few lines when long. Options: { collapsed?: boolean, maxHeight?: number }.
import { Button } from "antd";
import { useState } from "react";
import type { ReadWidgetProps } from "./registry.ts";
import { CopyButton, EMPTY, Muted } from "./text.tsx";

/** Lines shown while a long value is collapsed. */
export const COLLAPSED_LINES = 8;

/** The pretty-printed text of a value; a string that holds JSON is parsed first. */
export function prettyJson(value: unknown): string {
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (/^[[{"]/.test(trimmed) || /^(true|false|null|-?\d)/.test(trimmed)) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

export function JsonView({ value, options }: ReadWidgetProps) {
  const text = prettyJson(value);
  // Code ends with a line break; it starts no line of its own.
  const lines = text.replace(/\n+$/, "").split("\n");
  const long = lines.length > COLLAPSED_LINES;
  const [open, setOpen] = useState(options.collapsed === true ? false : !long);
  if (value === null || value === undefined || value === "") return EMPTY;
  const shown = open ? text : lines.slice(0, COLLAPSED_LINES).join("\n");
  const maxHeight = typeof options.maxHeight === "number" ? options.maxHeight : 480;
  return (
    <div className="np-json" data-widget="json">
      <div className="np-json-bar">
        <Muted style={{ fontSize: 12 }}>{lines.length === 1 ? "1 line" : `${lines.length} lines`}</Muted>
        <span>
          {long || options.collapsed === true ? (
            <Button size="small" type="link" onClick={() => setOpen(!open)} aria-expanded={open}>
              {open ? "Collapse" : "Expand"}
            </Button>
          ) : null}
          <CopyButton text={text} label="Copy JSON" />
        </span>
      </div>
      <pre
        // Focusable, so a keyboard user can scroll a long value.
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to be scrolled by keyboard
        tabIndex={0}
        style={{ maxHeight: open ? maxHeight : undefined }}
        className={open ? undefined : "np-json-faded"}
      >
        {shown}
      </pre>
    </div>
  );
}
