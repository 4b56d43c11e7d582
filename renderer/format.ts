// The one place that turns a value into the words the console shows, by the value's schema: enum
// labels, catalogue names (networks, chains), labels of special values (`-1` → "Latest block"),
// rounded durations, dates, grouped numbers. Read widgets, titles, tags and selects all go through it.
import { enumLabel } from "./schema.ts";
import type { JsonSchema } from "./types.ts";

/** Names of catalogue values by kind (`network` → `ethereum-mainnet` → "Ethereum Mainnet"). */
export type Catalogue = Record<string, Record<string, string>>;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000 };

function rounded(value: number): string {
  return value.toLocaleString("en", { maximumFractionDigits: value < 10 ? 1 : 0 });
}

/** A duration in milliseconds, rounded to what a person reads: "0.4 ms", "120 ms", "2.5 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1000) return `${rounded(ms)} ms`;
  if (ms < 60_000) return `${rounded(ms / 1000)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  if (minutes < 60) return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

const BYTE_UNITS = ["KiB", "MiB", "GiB", "TiB"];

/** A byte count as people read it: "512 B", "6.3 KiB", "64 MiB" (binary units, as limits are set). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || Math.abs(bytes) < 1024) return `${bytes.toLocaleString("en")} B`;
  let scaled = bytes;
  let unit = "B";
  for (const next of BYTE_UNITS) {
    if (Math.abs(scaled) < 1024) break;
    scaled /= 1024;
    unit = next;
  }
  return `${rounded(scaled)} ${unit}`;
}

/** The label of a special value the schema names (`x-valueLabels`), if this is one. */
export function specialValueLabel(value: unknown, schema: JsonSchema | undefined): string | undefined {
  const labels = schema?.["x-valueLabels"] as Record<string, string> | undefined;
  return value === null || value === undefined ? undefined : labels?.[String(value)];
}

/** The name of a catalogue value (`x-catalogue`), else the value itself. */
export function catalogueName(value: string, schema: JsonSchema | undefined, catalogue: Catalogue | undefined): string {
  const kind = schema?.["x-catalogue"];
  return (typeof kind === "string" && catalogue?.[kind]?.[value]) || value;
}

/** Money in minor units (cents) as dollars: "$49.00", "-$10.00". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  return `${sign}$${(Math.abs(cents) / 100).toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A value as people read it; "" for no value (views show their own empty mark). */
export function formatValue(value: unknown, schema: JsonSchema | undefined, catalogue?: Catalogue): string {
  if (value === null || value === undefined || value === "") return "";
  const special = specialValueLabel(value, schema);
  if (special !== undefined) return special;
  if (Array.isArray(value)) return value.map((item) => formatValue(item, schema?.items, catalogue)).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  if (Array.isArray(schema?.enum)) return enumLabel(schema, String(value));
  if (schema?.["x-catalogue"]) return catalogueName(String(value), schema, catalogue);
  const unit = schema?.["x-unit"];
  if (unit === "cents" && typeof value === "number") return formatCents(value);
  if (typeof unit === "string" && typeof value === "number") return formatDuration(value * (UNIT_MS[unit] ?? 1));
  if (schema?.format === "date-time" || schema?.format === "date") {
    const date = new Date(String(value));
    if (!Number.isNaN(date.getTime()))
      return schema.format === "date" ? date.toLocaleDateString() : date.toLocaleString();
  }
  if (typeof value === "number") return value.toLocaleString("en");
  return String(value);
}
