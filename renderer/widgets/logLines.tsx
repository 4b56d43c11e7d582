// Console lines of a run (a function's, a filter's): one monospaced line each, its level as a coloured
// tag named by the level's enum labels (the value's schema: an array of lines), in the order they were
// written. `options.levelKey` / `messageKey` name the fields (default `level` and `message`); `emptyText`
// is what an empty list says.
import { Tag } from "antd";
import { enumLabel, fieldSchema } from "../schema.ts";
import type { JsonSchema } from "../types.ts";
import type { ReadWidgetProps } from "./registry.ts";
import { EMPTY, Muted } from "./text.tsx";

const LEVEL_COLORS: Record<string, string> = { ERROR: "red", WARNING: "orange", INFO: "blue" };

export interface LogLine {
  level: string;
  message: string;
}

export function LogLines({
  logs,
  emptyText,
  levelSchema,
}: {
  logs: LogLine[];
  emptyText?: string;
  /** The level's enum schema, whose labels name each line's level. */
  levelSchema: JsonSchema | undefined;
}) {
  if (logs.length === 0) return emptyText ? <Muted>{emptyText}</Muted> : EMPTY;
  return (
    <div className="np-log-lines">
      {logs.map((line, index) => (
        // Log lines have no identity; their order is the key.
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <div key={index} className="np-log-line" data-level={line.level}>
          <Tag color={LEVEL_COLORS[line.level] ?? "default"} className="np-log-level">
            {enumLabel(levelSchema, line.level)}
          </Tag>
          {/* Coloured by its level in CSS (antd's Typography would bring its editing parts to every list). */}
          <span className="np-log-message">{line.message}</span>
        </div>
      ))}
    </div>
  );
}

export function LogLinesView({ value, options, schema }: ReadWidgetProps) {
  const levelKey = typeof options.levelKey === "string" ? options.levelKey : "level";
  const messageKey = typeof options.messageKey === "string" ? options.messageKey : "message";
  const logs = Array.isArray(value)
    ? value.map((entry: Record<string, unknown>) => ({
        level: String(entry?.[levelKey] ?? ""),
        message: String(entry?.[messageKey] ?? ""),
      }))
    : [];
  return (
    <LogLines
      logs={logs}
      emptyText={typeof options.emptyText === "string" ? options.emptyText : undefined}
      levelSchema={fieldSchema(schema, `/0/${levelKey}`)}
    />
  );
}
