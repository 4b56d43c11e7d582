// Where values come from: result paths, JSON pointers, `$scope.path` references, `{path}` templates
// and the serialisable predicates of `visibleWhen`/`disabledWhen`. Pure functions, no React.
import type { Predicate, Value, Variables } from "./types.ts";

/** Everything a `$scope.x` reference may name. */
export interface Scope {
  route?: Record<string, string | undefined>;
  query?: Record<string, string | string[] | undefined>;
  row?: unknown;
  record?: unknown;
  form?: unknown;
  viewer?: unknown;
  item?: unknown;
  result?: unknown;
}

const SCOPES = ["route", "query", "row", "record", "form", "viewer", "item", "result"] as const;
const REFERENCE = new RegExp(`^\\$(${SCOPES.join("|")})(?:\\.(.+))?$`);

function step(value: unknown, key: string): unknown {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value) && /^\d+$/.test(key)) return value[Number(key)];
  if (typeof value === "object") return (value as Record<string, unknown>)[key];
  return undefined;
}

/**
 * Reads a dotted path; a segment ending in `[]` maps over a list and flattens, so
 * `things.edges[].node` gives the nodes and `groups[].items[]` every item of every group.
 */
export function getPath(data: unknown, path: string): unknown {
  if (!path) return data;
  let current: unknown = data;
  let mapped = false;
  for (const raw of path.split(".")) {
    const isList = raw.endsWith("[]");
    const key = isList ? raw.slice(0, -2) : raw;
    if (mapped) {
      const items = (current as unknown[]).map((entry) => (key ? step(entry, key) : entry));
      current = isList ? items.flatMap((entry) => (Array.isArray(entry) ? entry : [])) : items;
    } else {
      current = key ? step(current, key) : current;
      if (isList) {
        current = Array.isArray(current) ? current : [];
        mapped = true;
      }
    }
  }
  return current;
}

/** The keys of a JSON pointer (`/a/b/0` → a, b, 0, with `~1` and `~0` escapes); `""` has none. */
export function pointerSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The keys a dotted result path reads, a mapped list (`edges[]`) by its first item: `edges[].node` → edges, 0, node. */
export function pathSegments(path: string): string[] {
  return path
    .split(".")
    .flatMap((raw) => (raw.endsWith("[]") ? [raw.slice(0, -2), "0"] : [raw]))
    .filter(Boolean);
}

/** Reads a JSON pointer (`/a/b/0`, with `~1` and `~0` escapes); `""` is the whole value. */
export function getPointer(data: unknown, pointer: string): unknown {
  return pointerSegments(pointer).reduce<unknown>((value, key) => step(value, key), data);
}

/** The first segment of a pointer as a property name, e.g. `/label` → `label`. */
export function pointerKey(pointer: string): string {
  return pointer.split("/")[1] ?? "";
}

export function isReference(value: unknown): value is string {
  return typeof value === "string" && REFERENCE.test(value);
}

/** Resolves one manifest value: references are looked up, objects and arrays resolved deeply. */
export function resolveValue(value: Value | undefined, scope: Scope): unknown {
  if (typeof value === "string") {
    const match = REFERENCE.exec(value);
    if (!match) return value;
    const base = scope[match[1] as keyof Scope];
    return match[2] ? getPath(base, match[2]) : base;
  }
  if (Array.isArray(value)) return value.map((entry) => resolveValue(entry, scope));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, resolveValue(entry, scope)]));
  }
  return value;
}

/** Resolves a variables map, dropping variables that resolve to undefined or an empty string. */
export function resolveVariables(variables: Variables | undefined, scope: Scope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(variables ?? {})) {
    const resolved = resolveValue(value, scope);
    if (resolved !== undefined && resolved !== "") out[key] = resolved;
  }
  return out;
}

/**
 * Fills `{path}` placeholders from data (dotted paths); `{$route.x}`-style references read the scope
 * instead. Values are URI-encoded when `encode` is set.
 */
export function fillTemplate(
  template: string,
  data: unknown,
  encode = false,
  scope: Scope = {},
  /** How a value of `data` at `path` reads (titles show labels, links keep raw values). */
  format?: (value: unknown, path: string) => string,
): string {
  return template.replace(/\{([^{}]+)\}/g, (_, raw: string) => {
    const path = raw.trim();
    const value = isReference(path) ? resolveValue(path, scope) : getPath(data, path);
    const text =
      value === undefined || value === null ? "" : format && !isReference(path) ? format(value, path) : String(value);
    return encode ? encodeURIComponent(text) : text;
  });
}

/** Fills `:param` segments of a route pattern; returns null when a parameter is missing. */
export function fillRoute(pattern: string, params: Record<string, string | undefined>): string | null {
  let missing = false;
  const path = pattern.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) missing = true;
    return encodeURIComponent(value ?? "");
  });
  return missing ? null : path;
}

function equal(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Evaluates a predicate against a subject (a row, a record, form data). `field` is a pointer into
 * the subject; compared values may themselves be references (`$form.kind`).
 */
export function evalPredicate(predicate: Predicate | undefined, subject: unknown, scope: Scope = {}): boolean {
  if (!predicate) return true;
  if ("not" in predicate) return !evalPredicate(predicate.not, subject, scope);
  if ("all" in predicate) return predicate.all.every((entry) => evalPredicate(entry, subject, scope));
  if ("any" in predicate) return predicate.any.some((entry) => evalPredicate(entry, subject, scope));
  const value = getPointer(subject, predicate.field);
  if ("eq" in predicate && !equal(value, resolveValue(predicate.eq, scope))) return false;
  if ("neq" in predicate && equal(value, resolveValue(predicate.neq, scope))) return false;
  if (predicate.in && !predicate.in.map((entry) => resolveValue(entry, scope)).some((entry) => equal(value, entry)))
    return false;
  if (predicate.truthy !== undefined && Boolean(value) !== predicate.truthy) return false;
  return true;
}
