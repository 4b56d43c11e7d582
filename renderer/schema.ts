// Reading entity JSON Schemas: form schemas by reference, field schemas by pointer, labels.
import type { JsonSchema } from "./types.ts";

/** Splits `thing#/$defs/createInput` into the entity name and the pointer. */
export function parseSchemaRef(ref: string): { name: string; pointer: string } {
  const [name, pointer = ""] = ref.split("#");
  return { name, pointer };
}

function follow(root: JsonSchema, pointer: string): JsonSchema | undefined {
  if (!pointer) return root;
  let current: unknown = root;
  for (const part of pointer.slice(1).split("/")) {
    if (!current || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return current as JsonSchema | undefined;
}

/**
 * The schema a form or dialog validates with: the referenced sub-schema, carrying the entity's
 * `$defs` so its local `$ref`s still resolve, without `$schema`/`$id` (rjsf's ajv runs draft-07
 * mode and would try to fetch the 2020-12 meta-schema). A `$ref` into another entity
 * (`function#/$defs/newFunction`) is copied into `$defs` and pointed at there, since rjsf resolves
 * references within one schema only.
 */
export function resolveSchemaRef(schemas: Record<string, JsonSchema>, ref: string): JsonSchema {
  const { name, pointer } = parseSchemaRef(ref);
  const entity = schemas[name];
  if (!entity) throw new Error(`The schema ${name} is not in the registry.`);
  const target = follow(entity, pointer);
  if (!target) throw new Error(`The schema ${ref} does not exist.`);
  const { $schema: _schema, $id: _id, ...rest } = target as JsonSchema & { $schema?: string };
  const defs: Record<string, unknown> = { ...(entity.$defs ?? {}), ...(rest.$defs ?? {}) };
  const localize = (node: unknown, from: string): unknown => {
    if (Array.isArray(node)) return node.map((item) => localize(item, from));
    if (!node || typeof node !== "object") return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key !== "$ref" || typeof value !== "string") {
        out[key] = localize(value, from);
        continue;
      }
      const target = parseSchemaRef(value);
      const owner = target.name || from;
      if (owner === name) {
        out.$ref = `#${target.pointer}`;
        continue;
      }
      const local = `${owner}${target.pointer.replace(/[^A-Za-z0-9]+/g, "_")}`;
      if (!(local in defs)) {
        defs[local] = {};
        const found = schemas[owner] && follow(schemas[owner], target.pointer);
        if (!found) throw new Error(`The schema ${value} does not exist.`);
        defs[local] = localize(found, owner);
      }
      out.$ref = `#/$defs/${local}`;
    }
    return out;
  };
  const body = localize(rest, name) as JsonSchema;
  for (const [key, def] of Object.entries(defs)) defs[key] = localize(def, name);
  return { ...body, $defs: defs as JsonSchema["$defs"] };
}

/**
 * A schema with its `$ref` followed: a local one (`#/$defs/x`) within `root`, one into another entity
 * (`<entity>#/$defs/<name>`) within `schemas` when given. Siblings of the `$ref` win.
 */
function deref(
  schema: JsonSchema | undefined,
  root: JsonSchema,
  schemas?: Record<string, JsonSchema>,
): JsonSchema | undefined {
  if (!schema?.$ref) return schema;
  const { $ref, ...siblings } = schema;
  const { name, pointer } = parseSchemaRef($ref);
  const owner = name ? schemas?.[name] : root;
  if (!owner) return schema;
  return { ...(deref(follow(owner, pointer), owner, schemas) ?? {}), ...siblings };
}

/** The schema a reference names (`error-log#/properties/errorKind`), its `$ref` followed; undefined when absent. */
export function schemaAtRef(schemas: Record<string, JsonSchema>, ref: string): JsonSchema | undefined {
  const { name, pointer } = parseSchemaRef(ref);
  const entity = schemas[name];
  return entity && deref(follow(entity, pointer), entity, schemas);
}

/**
 * Whether `value` meets a condition (an `if`), in the part of JSON Schema read models use for one: `const`,
 * `enum`, `type`, `required` and `properties` (nested). A condition with any other keyword does not hold,
 * so a read view shows the plain field rather than a branch it cannot tell is right.
 */
function holds(condition: JsonSchema, value: unknown): boolean {
  const record =
    value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  for (const [key, expected] of Object.entries(condition)) {
    if (key === "title" || key === "description" || key === "$comment") continue;
    if (key === "const") {
      if (JSON.stringify(value) !== JSON.stringify(expected)) return false;
    } else if (key === "enum") {
      if (!Array.isArray(expected) || !expected.some((item) => JSON.stringify(item) === JSON.stringify(value)))
        return false;
    } else if (key === "type") {
      const kinds = Array.isArray(expected) ? expected : [expected];
      const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
      const integer = typeof value === "number" && Number.isInteger(value);
      if (!kinds.some((wanted) => wanted === kind || (wanted === "integer" && integer))) return false;
    } else if (key === "required") {
      if (!record || !(expected as string[]).every((name) => record[name] !== undefined)) return false;
    } else if (key === "properties") {
      if (!record) continue;
      for (const [name, sub] of Object.entries(expected as Record<string, JsonSchema>))
        if (record[name] !== undefined && !holds(sub, record[name])) return false;
    } else return false;
  }
  return true;
}

/**
 * `schema` as it applies to `value`: the properties of each `allOf` item and of the `then` or `else`
 * whose `if` holds for the value are added to the schema's own (its own keywords win over a branch's, so
 * a field keeps its title). This is how a field's schema depends on another field's value (the settings
 * of a destination on the destination type), declared in plain JSON Schema as the inputs declare it.
 */
export function schemaForValue(
  schema: JsonSchema,
  value: unknown,
  root: JsonSchema,
  schemas?: Record<string, JsonSchema>,
): JsonSchema {
  let properties = schema.properties;
  const overlay = (raw: unknown) => {
    const branch = raw && typeof raw === "object" ? deref(raw as JsonSchema, root, schemas) : undefined;
    if (!branch) return;
    const applied = schemaForValue(branch, value, root, schemas);
    for (const [name, sub] of Object.entries(applied.properties ?? {})) {
      const own = deref(properties?.[name], root, schemas);
      properties = { ...properties, [name]: { ...deref(sub, root, schemas), ...own } };
    }
  };
  for (const item of (schema.allOf as unknown[] | undefined) ?? []) overlay(item);
  if (schema.if && typeof schema.if === "object")
    overlay(holds(schema.if as JsonSchema, value) ? schema.then : schema.else);
  return properties === schema.properties ? schema : { ...schema, properties };
}

/**
 * The schema of one field of an entity, by JSON pointer (`/labels`, `/items/0/size`); references
 * into other entities resolve when `schemas` (the registry's) is given. With the `record`, each level's
 * conditional branches that hold for its value apply (see schemaForValue). An object's properties come
 * with their references followed, so a read view of them needs no root to resolve against.
 */
export function fieldSchema(
  entity: JsonSchema | undefined,
  pointer: string,
  schemas?: Record<string, JsonSchema>,
  record?: unknown,
): JsonSchema | undefined {
  if (!entity) return undefined;
  let current: JsonSchema | undefined = entity;
  let value = record;
  for (const part of pointer.split("/").slice(1)) {
    current = deref(current, entity, schemas);
    if (!current) return undefined;
    if (record !== undefined) current = schemaForValue(current, value, entity, schemas);
    current = /^\d+$/.test(part) && current.items ? current.items : current.properties?.[part];
    value = value && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
  }
  let found = deref(current, entity, schemas);
  if (found && record !== undefined) found = schemaForValue(found, value, entity, schemas);
  if (!found?.properties) return found;
  const properties: Record<string, JsonSchema> = {};
  for (const [name, sub] of Object.entries(found.properties)) properties[name] = deref(sub, entity, schemas) ?? sub;
  return { ...found, properties };
}

export function hasType(schema: JsonSchema | undefined, type: string): boolean {
  const declared = schema?.type;
  return Array.isArray(declared) ? declared.includes(type) : declared === type;
}

/** `createdAt` → `Created at`, `LIMIT_REACHED` → `Limit reached`. */
export function humanize(text: string): string {
  const spaced = text
    .replace(/[_-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .trim()
    .toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** A field's label: the manifest's, else the schema title, else the humanised property name. */
export function labelFor(field: { field: string; label?: string }, schema: JsonSchema | undefined): string {
  if (field.label !== undefined) return field.label;
  if (schema?.title) return schema.title;
  const parts = field.field.split("/").filter((part) => part && !/^\d+$/.test(part));
  return humanize(parts[parts.length - 1] ?? "");
}

/** An enum value as people read it: the schema's `x-enumLabels` entry, else the value humanised. */
export function enumLabel(schema: JsonSchema | undefined, value: string): string {
  const labels = schema?.["x-enumLabels"] as Record<string, string> | undefined;
  return labels?.[value] ?? humanize(value);
}

/** A value by its enum label when the schema has one for it, else as it is (a series name that is no enum value). */
export function enumLabelOrSelf(schema: JsonSchema | undefined, value: string): string {
  const labels = schema?.["x-enumLabels"] as Record<string, string> | undefined;
  return labels?.[value] ?? value;
}

type UiNode = Record<string, unknown>;

/** Sub-schemas whose properties render at the same level as the schema's own (if/then, allOf …). */
function alternatives(schema: JsonSchema): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const key of ["allOf", "anyOf", "oneOf"])
    if (Array.isArray(schema[key])) out.push(...(schema[key] as JsonSchema[]));
  for (const key of ["then", "else"])
    if (schema[key] && typeof schema[key] === "object") out.push(schema[key] as JsonSchema);
  return out;
}

/**
 * The uiSchema with `ui:enumNames` for every enum field of a form schema (its `x-enumLabels`, else the
 * values humanised), so a select shows the words read views show. A field with its own widget or
 * enumNames keeps them. The given uiSchema is not changed.
 */
export function withEnumNames(schema: JsonSchema, uiSchema: UiNode = {}, root: JsonSchema = schema): UiNode {
  const resolved = deref(schema, root);
  if (!resolved) return uiSchema;
  const out: UiNode = { ...uiSchema };
  const visit = (node: JsonSchema) => {
    for (const [name, raw] of Object.entries(node.properties ?? {})) {
      const child = deref(raw, root);
      if (!child) continue;
      const own = (out[name] ?? {}) as UiNode;
      const options = Array.isArray(child.enum) ? child : child.items ? deref(child.items, root) : undefined;
      if (options && Array.isArray(options.enum) && options.enum.every((v) => typeof v === "string")) {
        if (own["ui:widget"] === undefined && own["ui:enumNames"] === undefined)
          out[name] = {
            ...own,
            "ui:enumNames": Object.fromEntries(
              (options.enum as string[]).map((value) => [value, enumLabel(options, value)]),
            ),
          };
      } else if (child.properties || alternatives(child).length) {
        out[name] = withEnumNames(child, own, root);
      }
    }
    for (const branch of alternatives(node)) {
      const next = deref(branch, root);
      if (next) visit(next);
    }
  };
  visit(resolved);
  return out;
}
