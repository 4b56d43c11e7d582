// `code-editor`: an rjsf edit control for code (e.g. a JavaScript filter). A monospace textarea with
// line numbers (the line of a compile error marked); Tab indents by two spaces and Shift+Tab removes them, Escape then Tab leaves the
// field (keyboard users are never trapped). `ui:options`: { rows?: number, language?: string }.
import type { WidgetProps } from "@rjsf/utils";
import { type KeyboardEvent, useRef, useState } from "react";

const INDENT = "  ";

/** The text and selection after Tab (indent) or Shift+Tab (outdent) at a selection. */
export function indentEdit(
  text: string,
  start: number,
  end: number,
  outdent: boolean,
): { text: string; start: number; end: number } {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  if (!outdent && start === end)
    return { text: text.slice(0, start) + INDENT + text.slice(end), start: start + 2, end: start + 2 };
  const block = text.slice(lineStart, end);
  const lines = block.split("\n");
  const changed = lines.map((line) =>
    outdent ? line.replace(/^ {1,2}/, "") : line.length || lines.length === 1 ? INDENT + line : line,
  );
  const firstDelta = changed[0].length - lines[0].length;
  const joined = changed.join("\n");
  return {
    text: text.slice(0, lineStart) + joined + text.slice(end),
    start: Math.max(lineStart, start + firstDelta),
    end: end + (joined.length - block.length),
  };
}

export interface CodeAreaProps {
  id: string;
  value: string;
  onChange: (next: string | undefined) => void;
  rows?: number;
  label?: string;
  placeholder?: string;
  disabled?: boolean;
  /** Marks the field as in error (a red border). */
  invalid?: boolean;
  /** A 1-based line to mark in the gutter (where a compile error is). */
  errorLine?: number;
  language?: string;
  describedBy?: string;
  onBlur?: (text: string) => void;
  onFocus?: (text: string) => void;
}

/** The one code area: every filter and function editor of the console is this. */
export function CodeArea(props: CodeAreaProps) {
  const text = props.value;
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const [released, setReleased] = useState(false);
  const rows = props.rows ?? 12;
  const lineCount = Math.max(text.split("\n").length, rows);

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Escape") {
      setReleased(true);
      return;
    }
    if (event.key !== "Tab" || released) {
      setReleased(false);
      return;
    }
    event.preventDefault();
    const target = event.currentTarget;
    const next = indentEdit(text, target.selectionStart, target.selectionEnd, event.shiftKey);
    props.onChange(next.text);
    requestAnimationFrame(() => area.current?.setSelectionRange(next.start, next.end));
  }

  const numbers = Array.from({ length: lineCount }, (_, index) => index + 1);
  return (
    <div className={`np-code-editor${props.invalid ? " np-code-editor-error" : ""}`}>
      <div className="np-code-gutter" ref={gutter} aria-hidden>
        {props.errorLine && props.errorLine <= lineCount ? (
          <>
            {numbers.slice(0, props.errorLine - 1).join("\n")}
            {props.errorLine > 1 ? "\n" : ""}
            <span style={{ color: "#ff7875", fontWeight: 700 }}>{`\u25b6 ${props.errorLine}`}</span>
            {props.errorLine < lineCount ? `\n${numbers.slice(props.errorLine).join("\n")}` : ""}
          </>
        ) : (
          numbers.join("\n")
        )}
      </div>
      <textarea
        id={props.id}
        ref={area}
        value={text}
        rows={rows}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        disabled={props.disabled}
        placeholder={props.placeholder}
        aria-label={props.label || undefined}
        aria-invalid={props.invalid || undefined}
        aria-describedby={props.describedBy}
        data-language={props.language ?? "javascript"}
        onChange={(event) => props.onChange(event.target.value === "" ? undefined : event.target.value)}
        onBlur={() => props.onBlur?.(text)}
        onFocus={() => props.onFocus?.(text)}
        onKeyDown={onKeyDown}
        onScroll={(event) => {
          if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
        }}
      />
    </div>
  );
}

/** The line a compile error names ("Line 3, column 7: …" from the service, "(line 3)" from a test run). */
export function errorLineOf(messages: readonly string[] | undefined): number | undefined {
  for (const message of messages ?? []) {
    const found = /^Line (\d+)\b/.exec(message) ?? /\(line (\d+)\)/.exec(message);
    if (found) return Number(found[1]);
  }
  return undefined;
}

export function CodeEditor(props: WidgetProps) {
  return (
    <CodeArea
      id={props.id}
      value={typeof props.value === "string" ? props.value : ""}
      onChange={props.onChange}
      rows={Number(props.options.rows) || 12}
      label={props.label}
      placeholder={props.placeholder}
      disabled={props.disabled || props.readonly}
      invalid={Boolean(props.rawErrors?.length)}
      errorLine={errorLineOf(props.rawErrors)}
      language={typeof props.options.language === "string" ? props.options.language : undefined}
      describedBy={`${props.id}__description`}
      onBlur={(text) => props.onBlur(props.id, text)}
      onFocus={(text) => props.onFocus(props.id, text)}
    />
  );
}
