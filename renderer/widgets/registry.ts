// One widget registry keyed by name. An entry may have a read view (table cells, detail fields), an
// edit control for rjsf (`widgets`), and a view for `custom` screens. Defaults for fields without an
// explicit widget are chosen by small named predicates over the field's schema, in order.
import type { WidgetProps } from "@rjsf/utils";
import { type ComponentType, createElement, lazy, type ReactNode, Suspense } from "react";
import type { Scope } from "../resolve.ts";
import { hasType } from "../schema.ts";
import type { JsonSchema } from "../types.ts";

export interface ReadWidgetProps {
  value: unknown;
  schema?: JsonSchema;
  options: Record<string, unknown>;
  /** The row or record the value belongs to. */
  record?: unknown;
  copy?: boolean;
  /** Extra controls for one item of an array value (e.g. a remove button on a tag). */
  itemExtra?: (item: unknown, index: number) => ReactNode;
}

export interface CustomViewProps {
  /** The query result, or the record at the view's `record` path when it names one. */
  data: unknown;
  options: Record<string, unknown>;
  scope: Scope;
}

export interface WidgetEntry {
  read?: ComponentType<ReadWidgetProps>;
  edit?: ComponentType<WidgetProps>;
  view?: ComponentType<CustomViewProps>;
}

const widgets = new Map<string, WidgetEntry>();

/** What a lazy widget shows while its code loads: a word, not an empty cell that looks like no value. */
const WidgetLoading = () => createElement("span", { className: "np-muted", "aria-busy": true }, "Loading…");

/**
 * A widget part whose code loads when it first renders. A plain function component (rjsf accepts only
 * functions as widgets) with its own Suspense boundary, so a field that appears mid-edit never
 * suspends, and so resets, the form around it.
 */
export function lazyWidget<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  const Lazy = lazy(async () => ({ default: await load() })) as ComponentType<P>;
  return (props: P) => createElement(Suspense, { fallback: createElement(WidgetLoading) }, createElement(Lazy, props));
}

/** Adds or extends a widget; later registrations of the same name override earlier parts. */
export function registerWidget(name: string, entry: WidgetEntry): void {
  widgets.set(name, { ...widgets.get(name), ...entry });
}

export function getWidget(name: string): WidgetEntry | undefined {
  return widgets.get(name);
}

export function widgetNames(): string[] {
  return [...widgets.keys()];
}

/** rjsf `widgets` from every entry with an edit control. */
export function editWidgets(): Record<string, ComponentType<WidgetProps>> {
  const out: Record<string, ComponentType<WidgetProps>> = {};
  for (const [name, entry] of widgets) if (entry.edit) out[name] = entry.edit;
  return out;
}

type SchemaTest = (schema: JsonSchema) => boolean;

export const isEnum: SchemaTest = (schema) => Array.isArray(schema.enum);
export const isUri: SchemaTest = (schema) => schema.format === "uri" || schema.format === "url";
export const isDateTime: SchemaTest = (schema) => schema.format === "date-time" || schema.format === "date";
export const isEmail: SchemaTest = (schema) => schema.format === "email";
export const isBoolean: SchemaTest = (schema) => hasType(schema, "boolean");
export const isNumber: SchemaTest = (schema) => hasType(schema, "number") || hasType(schema, "integer");
/** An array of objects with a `label`, or of strings: shown as tags. */
export const isTagList: SchemaTest = (schema) =>
  hasType(schema, "array") &&
  (Boolean(schema.items?.properties?.label) || hasType(schema.items, "string") || isEnum(schema.items ?? {}));
/** An object whose schema names its fields (or what its open keys hold): shown as labelled values. */
export const isFieldObject: SchemaTest = (schema) =>
  hasType(schema, "object") &&
  (Boolean(schema.properties && Object.keys(schema.properties).length) ||
    Boolean(schema.additionalProperties && typeof schema.additionalProperties === "object"));
export const isObject: SchemaTest = (schema) => hasType(schema, "object") || hasType(schema, "array");

/** Ordered: the first predicate that holds names the default widget. */
export const DEFAULT_RULES: { name: string; test: SchemaTest; widget: string }[] = [
  { name: "enum", test: isEnum, widget: "status" },
  { name: "uri", test: isUri, widget: "link" },
  { name: "date-time", test: isDateTime, widget: "datetime" },
  { name: "email", test: isEmail, widget: "email" },
  { name: "boolean", test: isBoolean, widget: "boolean" },
  { name: "number", test: isNumber, widget: "number" },
  { name: "tag list", test: isTagList, widget: "tags" },
  { name: "object with fields", test: isFieldObject, widget: "fields" },
  { name: "object", test: isObject, widget: "json" },
];

/** The widget name for a field: explicit name first, then the schema predicates, then `text`. */
export function pickWidget(explicit: string | undefined, schema: JsonSchema | undefined): string {
  if (explicit) return explicit;
  if (schema) for (const rule of DEFAULT_RULES) if (rule.test(schema)) return rule.widget;
  return "text";
}
