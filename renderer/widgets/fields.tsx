// The `fields` read view: an object shown as labelled values, one per property of its schema (labels
// from their titles, each value by the widget its schema chooses), then the keys an open object holds
// (`additionalProperties`, e.g. headers) by name. A write-only property (a secret) shows only whether it
// is set, never its value. Options: { omit?: string[] } property names shown elsewhere on the page;
// { pairs?: { name, value } } JSON pointers: the value is an array of entries, each a row named by its
// `name` (repeated names kept, in order: a request's headers).
import { getPointer } from "../resolve.ts";
import { humanize } from "../schema.ts";
import type { JsonSchema } from "../types.ts";
import { getWidget, pickWidget, type ReadWidgetProps } from "./registry.ts";
import { EMPTY, Muted } from "./text.tsx";

const SETTING_OPTIONS = { grouping: false };

/** A write-only value: whether it is set, never what it is (the service sends a mask, or nothing). */
function Secret({ value }: { value: unknown }) {
  const set = value !== undefined && value !== null && value !== "";
  return set ? (
    <span>
      <span aria-hidden="true">••••••••</span> <Muted>(set, write-only)</Muted>
    </span>
  ) : (
    <Muted>Not set</Muted>
  );
}

function Value({ value, schema }: { value: unknown; schema?: JsonSchema }) {
  if (schema?.writeOnly === true) return <Secret value={value} />;
  if (value === undefined || value === null || value === "") return EMPTY;
  const Read = getWidget(pickWidget(undefined, schema))?.read ?? getWidget("text")?.read;
  // A setting's number is a code or a small count (a port, retries): 5432, not 5,432.
  return Read ? <Read value={value} schema={schema} options={SETTING_OPTIONS} /> : String(value);
}

/** Pointers to an entry's name and value (the `pairs` option), or null when the option is absent. */
function pairPointers(options: Record<string, unknown>): { name: string; value: string } | null {
  const pairs = options.pairs as { name?: unknown; value?: unknown } | undefined;
  return pairs && typeof pairs.name === "string" && typeof pairs.value === "string"
    ? { name: pairs.name, value: pairs.value }
    : null;
}

/** An array of entries as labelled values, one row per entry, in order (names may repeat). */
function Pairs({ entries, pointers }: { entries: unknown[]; pointers: { name: string; value: string } }) {
  if (!entries.length) return EMPTY;
  return (
    <dl className="np-fields" data-widget="fields">
      {entries.map((entry, index) => (
        // Entries have no identity of their own but their place: names repeat, the list never reorders.
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <div key={index} className="np-fields-row">
          <dt>{String(getPointer(entry, pointers.name) ?? "")}</dt>
          <dd>
            <Value value={getPointer(entry, pointers.value)} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function Fields({ value, schema, options }: ReadWidgetProps) {
  const pointers = pairPointers(options);
  if (pointers) return Array.isArray(value) ? <Pairs entries={value} pointers={pointers} /> : EMPTY;
  if (!value || typeof value !== "object" || Array.isArray(value)) return EMPTY;
  const record = value as Record<string, unknown>;
  const omit = new Set(Array.isArray(options.omit) ? (options.omit as string[]) : []);
  const declared = schema?.properties ?? {};
  const open = schema?.additionalProperties;
  const rows: { key: string; label: string; value: unknown; schema?: JsonSchema }[] = [];
  for (const [name, sub] of Object.entries(declared))
    if (!omit.has(name) && (record[name] !== undefined || sub.writeOnly === true))
      rows.push({ key: name, label: sub.title ?? humanize(name), value: record[name], schema: sub });
  // Keys the schema does not name: an open object's entries by their own names (a header keeps its
  // spelling); a closed one's are not shown (a value a newer service added has no label here yet).
  if (open !== false)
    for (const [name, item] of Object.entries(record))
      if (!(name in declared) && !omit.has(name))
        rows.push({
          key: name,
          label: name,
          value: item,
          schema: open && typeof open === "object" ? (open as JsonSchema) : undefined,
        });
  if (!rows.length) return EMPTY;
  return (
    <dl className="np-fields" data-widget="fields">
      {rows.map((row) => (
        <div key={row.key} className="np-fields-row">
          <dt>{row.label}</dt>
          <dd>
            <Value value={row.value} schema={row.schema} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
