// `code-editor`: an rjsf edit control for code (e.g. a JavaScript filter). A monospace textarea with
// line numbers; Tab indents by two spaces and Shift+Tab removes them, Escape then Tab leaves the
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

export function CodeEditor(props: WidgetProps) {
  const text = typeof props.value === "string" ? props.value : "";
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const [released, setReleased] = useState(false);
  const rows = Number(props.options.rows) || 12;
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

  return (
    <div className={`np-code-editor${props.rawErrors?.length ? " np-code-editor-error" : ""}`}>
      <div className="np-code-gutter" ref={gutter} aria-hidden>
        {Array.from({ length: lineCount }, (_, index) => index + 1).join("\n")}
      </div>
      <textarea
        id={props.id}
        ref={area}
        value={text}
        rows={rows}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        disabled={props.disabled || props.readonly}
        placeholder={props.placeholder}
        aria-label={props.label || undefined}
        aria-describedby={`${props.id}__description`}
        data-language={typeof props.options.language === "string" ? props.options.language : "javascript"}
        onChange={(event) => props.onChange(event.target.value === "" ? undefined : event.target.value)}
        onBlur={() => props.onBlur(props.id, text)}
        onFocus={() => props.onFocus(props.id, text)}
        onKeyDown={onKeyDown}
        onScroll={(event) => {
          if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
        }}
      />
    </div>
  );
}
