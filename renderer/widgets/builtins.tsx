// The built-in read views. Each is small and generic: it knows a value's shape, never an entity.
import { CheckCircleFilled, CloseCircleFilled, MinusCircleOutlined } from "@ant-design/icons";
import { Space, Tag } from "antd";
import type { ReactNode } from "react";
import { useFormat } from "../data.tsx";
import { formatBytes, formatCents, formatDuration, specialValueLabel } from "../format.ts";
import { Hint } from "../Hint.tsx";
import { fillTemplate, getPointer } from "../resolve.ts";
import { enumLabel } from "../schema.ts";
import type { JsonSchema } from "../types.ts";
import { Fields } from "./fields.tsx";
import { JsonView } from "./json.tsx";
import { LogLinesView } from "./logLines.tsx";
import { type ReadWidgetProps, registerWidget } from "./registry.ts";
import { SecretOnce } from "./secret.tsx";
import { CopyButton, EMPTY, Muted } from "./text.tsx";

function isBlank(value: unknown): boolean {
  return value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
}

/** Text longer than this may be cut in a table cell, so it carries its whole self as a hover title. */
const LONG_TEXT = 60;

function Text({ value, copy, schema }: ReadWidgetProps) {
  const format = useFormat();
  if (isBlank(value)) return EMPTY;
  // A number shown as text keeps its digits (a block number, a code); named values get their names.
  const text = typeof value === "number" ? (specialValueLabel(value, schema) ?? String(value)) : format(value, schema);
  return (
    <span className="np-text">
      {/* A table column with a width cuts long text to a few lines: the whole of it shows on hover. */}
      {text.length > LONG_TEXT ? (
        // Focusable so that a keyboard user can unfold it where a cell cuts it (src/styles.css).
        // biome-ignore lint/a11y/noNoninteractiveTabindex: cut text must be readable by keyboard as by hover (WCAG 2.1.1)
        <span className="np-text-value" title={text} tabIndex={0}>
          {text}
        </span>
      ) : (
        <span className="np-text-value">{text}</span>
      )}
      {copy ? <CopyButton text={typeof value === "object" ? JSON.stringify(value) : String(value)} /> : null}
    </span>
  );
}

/** Colours for common status words; a field's `options.colors` overrides them. */
const STATUS_COLORS: { test: RegExp; color: string }[] = [
  { test: /^(ACTIVE|AVAILABLE|COMPLETED|ENABLED|SUCCESS|HEALTHY|PAID|OK)$/, color: "green" },
  { test: /(FAILED|ERROR|SUSPENDED|TERMINATED|CANCELED|CANCELLED|DISABLED|UNCOLLECTIBLE|VOID)$/, color: "red" },
  { test: /(PAUSED|PENDING|LIMIT_REACHED|IN_PROGRESS|DEPLOY|WARNING|OPEN)/, color: "orange" },
  { test: /^(ARCHIVED|DRAFT|INACTIVE|NONE)$/, color: "default" },
];

export function statusColor(value: string, colors?: Record<string, string>): string {
  if (colors?.[value]) return colors[value];
  const upper = value.toUpperCase();
  return STATUS_COLORS.find((entry) => entry.test.test(upper))?.color ?? "blue";
}

function Status({ value, options, schema, record }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  const text = String(value);
  const labels = options.labels as Record<string, string> | undefined;
  const tag = (
    <Tag color={statusColor(text, options.colors as Record<string, string> | undefined)} variant="filled">
      {labels?.[text] ?? enumLabel(schema, text)}
    </Tag>
  );
  // `reason`: a pointer to why the record is in this state, shown under the tag.
  const reason = typeof options.reason === "string" ? getPointer(record, options.reason) : undefined;
  if (isBlank(reason)) return tag;
  return (
    <Space orientation="vertical" size={2}>
      {tag}
      <span className="np-muted np-ellipsis" style={{ fontSize: 12 }} title={String(reason)}>
        {String(reason)}
      </span>
    </Space>
  );
}

function Link({ value, copy, options, record }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  const href = String(value);
  const safe = /^https?:\/\//i.test(href);
  // `text`: the link's words instead of its address ({field} placeholders from the row), so a column of
  // links reads as one name per row. Words wrap where an address would be cut, hence not `.np-text`.
  const text = typeof options.text === "string" ? fillTemplate(options.text, record) : undefined;
  if (text && safe)
    return (
      <span className="np-link-words">
        <a href={href} target="_blank" rel="noreferrer" title={href}>
          {text}
        </a>
        {copy === false ? null : <CopyButton text={href} />}
      </span>
    );
  return (
    <span className="np-text" style={{ wordBreak: "break-all" }}>
      {/* A table cell cuts a long address to one line: the whole of it shows on hover, and on focus of its link or copy button. */}
      <code title={href}>
        {safe ? (
          <a href={href} target="_blank" rel="noreferrer">
            {href}
          </a>
        ) : (
          href
        )}
      </code>
      {copy === false ? null : <CopyButton text={href} />}
    </span>
  );
}

/** An http(s) address in running text, up to the first space; a closing bracket or stop after it is not part of it. */
const URL_IN_TEXT = /https?:\/\/[^\s<>"]*[^\s<>".,;:!?)\]]/gi;

/**
 * A message (an e-mail's body, say): its lines kept, and every http(s) address in it a link that opens
 * in a new tab, with a button that copies it.
 */
function Message({ value }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  const text = String(value);
  const parts: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_IN_TEXT)) {
    const at = match.index ?? 0;
    if (at > last) parts.push(text.slice(last, at));
    parts.push(
      <span key={at} className="np-text">
        <a href={match[0]} target="_blank" rel="noreferrer" style={{ wordBreak: "break-all" }}>
          {match[0]}
        </a>
        <CopyButton text={match[0]} label="Copy link" />
      </span>,
    );
    last = at + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return <span style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{parts}</span>;
}

function Email({ value, copy }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  return (
    <span className="np-text">
      <a href={`mailto:${String(value)}`}>{String(value)}</a>
      {copy ? <CopyButton text={String(value)} /> : null}
    </span>
  );
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/** "3 days ago" for a date, relative to `now`. */
export function relativeTime(date: Date, now: Date = new Date()): string {
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === "second") return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, "second");
}

function DateTime({ value }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  const date = new Date(String(value));
  if (Number.isNaN(date.getTime())) return <span>{String(value)}</span>;
  return (
    <Hint title={date.toLocaleString()}>
      <time dateTime={date.toISOString()}>{relativeTime(date)}</time>
    </Hint>
  );
}

function BooleanView({ value, options }: ReadWidgetProps) {
  if (value === null || value === undefined) return EMPTY;
  const [yes, no] = (options.labels as [string, string] | undefined) ?? ["Yes", "No"];
  return value ? (
    <Space size={4}>
      <CheckCircleFilled style={{ color: "#52c41a" }} />
      {yes}
    </Space>
  ) : options.outcome === true ? (
    // An outcome's false is a failure: red, as a failed run reads in every console, not a neutral "no".
    <Space size={4} data-outcome="failed">
      <CloseCircleFilled style={{ color: "#ff4d4f" }} />
      {no}
    </Space>
  ) : (
    <Space size={4}>
      <MinusCircleOutlined style={{ color: "#bfbfbf" }} />
      {no}
    </Space>
  );
}

function NumberView({ value, options, schema }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  const special = specialValueLabel(value, schema);
  if (special !== undefined) return <span>{special}</span>;
  const number = Number(value);
  const unit = schema?.["x-unit"];
  if (unit === "cents") return <span style={{ fontVariantNumeric: "tabular-nums" }}>{formatCents(number)}</span>;
  if (unit === "ms" || unit === "s")
    return (
      <span style={{ fontVariantNumeric: "tabular-nums" }}>
        {formatDuration(unit === "s" ? number * 1000 : number)}
      </span>
    );
  // Bytes scale to KiB, MiB, …; the exact count stays in the tooltip.
  if (options.unit === "B")
    return (
      <span style={{ fontVariantNumeric: "tabular-nums" }} title={`${number.toLocaleString("en")} bytes`}>
        {formatBytes(number)}
      </span>
    );
  const suffix = options.unit ? ` ${String(options.unit)}` : "";
  // Codes and ids (an error code, a block number) read better without thousands separators; small
  // quantities (GB-seconds of one run) need more than the default three fraction digits.
  const digits = typeof options.maximumFractionDigits === "number" ? options.maximumFractionDigits : undefined;
  const text =
    options.grouping === false ? String(number) : number.toLocaleString("en", { maximumFractionDigits: digits });
  return <span style={{ fontVariantNumeric: "tabular-nums" }}>{`${text}${suffix}`}</span>;
}

/** A tag's text: an object's label; an enum value's label, a network's name; any other string as it is. */
function itemLabel(
  item: unknown,
  key: string,
  itemSchema: JsonSchema | undefined,
  format: (value: unknown, schema: JsonSchema | undefined) => string,
): string {
  if (item && typeof item === "object") return String((item as Record<string, unknown>)[key] ?? "");
  return format(item, itemSchema);
}

function Tags({ value, options, schema, itemExtra }: ReadWidgetProps) {
  const format = useFormat();
  const items = Array.isArray(value) ? value : [];
  if (!items.length) return options.emptyText ? <Muted>{String(options.emptyText)}</Muted> : EMPTY;
  const key = typeof options.labelKey === "string" ? options.labelKey : "label";
  const toneKey = typeof options.toneKey === "string" ? options.toneKey : undefined;
  // Items may repeat (a run logs the same line twice): a repeat's key counts the copies before it.
  const seen = new Map<string, number>();
  const keys = items.map((item) => {
    const content = typeof item === "object" ? JSON.stringify(item) : String(item);
    const copies = seen.get(content) ?? 0;
    seen.set(content, copies + 1);
    return copies ? `${content}\u0000${copies}` : content;
  });
  return (
    <Space size={[4, 4]} wrap>
      {items.map((item, index) => {
        const tone =
          toneKey && item && typeof item === "object" ? (item as Record<string, unknown>)[toneKey] : undefined;
        return (
          <Tag
            key={keys[index]}
            color={typeof tone === "string" ? statusColor(tone) : undefined}
            style={{ marginInlineEnd: 0 }}
          >
            {itemLabel(item, key, schema?.items, format)}
            {itemExtra?.(item, index)}
          </Tag>
        );
      })}
    </Space>
  );
}

/**
 * Code with a copy button, unless the field says `copy: false` (a masked token: its copy would be useless).
 * `maxChars`: a long value (a payload) is cut on screen; the copy button copies all of it.
 */
function Code({ value, copy, options }: ReadWidgetProps) {
  if (isBlank(value)) return EMPTY;
  const text = String(value);
  const max = typeof options.maxChars === "number" ? options.maxChars : undefined;
  return (
    <span className="np-text" style={max ? { wordBreak: "break-all" } : undefined}>
      {/* Cut on screen by `maxChars` or by a table cell's width: the whole value shows on hover. */}
      <code title={text}>{max && text.length > max ? `${text.slice(0, max)}…` : text}</code>
      {copy === false ? null : <CopyButton text={text} />}
    </span>
  );
}

const READ_VIEWS: Record<string, (props: ReadWidgetProps) => ReactNode> = {
  text: Text,
  status: Status,
  link: Link,
  message: Message,
  email: Email,
  datetime: DateTime,
  boolean: BooleanView,
  number: NumberView,
  tags: Tags,
  json: JsonView,
  fields: Fields,
  "secret-once": SecretOnce,
  code: Code,
  "log-lines": LogLinesView,
};

for (const [name, read] of Object.entries(READ_VIEWS)) registerWidget(name, { read });
