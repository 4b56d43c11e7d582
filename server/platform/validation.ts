import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { EntityInputRef, EntityInputs } from "../../schemas/generated/entities.ts";
import { badInput, type FieldError } from "./errors.ts";
import { hasUnpairedSurrogate } from "./text.ts";

const entitiesDir = path.resolve(import.meta.dirname, "../../schemas/entities");

export type EntitySchemas = Record<string, Record<string, unknown>>;

/** Every entity schema by name (its `$id`, the file name without `.schema.json`). */
export function loadEntitySchemas(dir = entitiesDir): EntitySchemas {
  const schemas: EntitySchemas = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".schema.json"))
    .sort()) {
    const schema = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as Record<string, unknown>;
    schemas[file.replace(/\.schema\.json$/, "")] = schema;
  }
  return schemas;
}

/**
 * Our own annotations in entity schemas, all about how the console shows a value (validation ignores
 * them): `x-enumLabels` names an enum's values; `x-catalogue` marks a string that is a catalogue value
 * (a network, a chain), shown by its name; `x-valueLabels` names special values of a field that is
 * not an enum (`-1` → "Latest block"); `x-unit` is the unit of a number the console rounds and names (`cents`: money in minor units, shown as dollars);
 * `x-graphql` names the SDL enum an enum is (its values are written into the SDL by `npm run generate`).
 */
export const ANNOTATION_KEYWORDS = [
  { keyword: "x-enumLabels", metaSchema: { type: "object", additionalProperties: { type: "string" } } },
  { keyword: "x-catalogue", metaSchema: { enum: ["network", "chain"] } },
  { keyword: "x-valueLabels", metaSchema: { type: "object", additionalProperties: { type: "string" } } },
  { keyword: "x-unit", metaSchema: { enum: ["ms", "s", "cents"] } },
  { keyword: "x-graphql", metaSchema: { type: "string", pattern: "^[A-Z][A-Za-z0-9]*$" } },
];

export function addAnnotationKeywords(ajv: Ajv2020): void {
  for (const keyword of ANNOTATION_KEYWORDS) ajv.addKeyword(keyword);
}

export function createAjv(schemas: EntitySchemas): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: false });
  addFormats.default(ajv);
  addAnnotationKeywords(ajv);
  for (const schema of Object.values(schemas)) ajv.addSchema(schema);
  return ajv;
}

let shared: { ajv: Ajv2020; compiled: Map<string, ValidateFunction> } | null = null;

function validatorFor(schemaRef: string): ValidateFunction {
  shared ??= { ajv: createAjv(loadEntitySchemas()), compiled: new Map() };
  let validate = shared.compiled.get(schemaRef);
  if (!validate) {
    const found = shared.ajv.getSchema(schemaRef);
    if (!found) throw new Error(`Unknown schema ${schemaRef}`);
    validate = found;
    shared.compiled.set(schemaRef, validate);
  }
  return validate;
}

function toFieldError(error: ErrorObject): FieldError {
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return { pointer: `${error.instancePath}/${missing}`, message: "This field is required." };
  }
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { pointer: `${error.instancePath}/${extra}`, message: "This field is not allowed." };
  }
  return { pointer: error.instancePath || "/", message: humanMessage(error) };
}

function humanMessage(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "minLength":
      return p.limit === 1 ? "This field cannot be empty." : `Use at least ${p.limit} characters.`;
    case "maxLength":
      return `Use at most ${p.limit} characters.`;
    case "format":
      return `This is not a valid ${p.format}.`;
    case "enum":
      return `Choose one of: ${(p.allowedValues as unknown[]).join(", ")}.`;
    case "pattern":
      return "This contains characters that are not allowed.";
    case "minimum":
    case "maximum":
      return `Must be ${error.keyword === "minimum" ? "at least" : "at most"} ${p.limit}.`;
    default:
      return error.message ?? "This value is not valid.";
  }
}

/**
 * Validates a mutation's input with the same JSON Schema the console's form uses.
 * Throws BAD_USER_INPUT naming every bad field by JSON pointer; returns the input as the type
 * generated from that schema (schemas/generated/entities.ts).
 */
export function validateInput<R extends EntityInputRef>(schemaRef: R, data: unknown): EntityInputs[R] {
  const validate = validatorFor(schemaRef);
  if (!validate(data)) {
    const seen = new Set<string>();
    const fields = (validate.errors ?? []).map(toFieldError).filter((f) => {
      if (seen.has(f.pointer)) return false;
      seen.add(f.pointer);
      return true;
    });
    throw badInput(fields);
  }
  // The schema just checked is the one the type was generated from.
  return data as EntityInputs[R];
}

/** How deep a JSON value may nest: deeper values overflow the stack of JSON.stringify and of the stores. */
export const MAX_JSON_DEPTH = 64;
/** How many values (keys and items) one argument may hold in all. */
export const MAX_JSON_VALUES = 10_000;

/**
 * C0 control characters other than tab, line feed and carriage return, and DEL. NUL cannot be stored
 * in PostgreSQL text or jsonb at all; the others are never meant in a name, a URL or code.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job.
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** What makes a text unsafe, to follow "This contains " (or "A key contains "); undefined when nothing does. */
function unsafeText(text: string): string | undefined {
  if (CONTROL_CHARACTER.test(text)) return "control characters, which are not allowed.";
  if (hasUnpairedSurrogate(text)) return "an unpaired UTF-16 surrogate (half of a character), which cannot be stored.";
  return undefined;
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * The checks every argument of every field gets before any schema or rule sees it (the field helpers
 * run it), so no value can reach a store or JSON.stringify that PostgreSQL or the stack cannot take:
 * no control characters or unpaired surrogates in text (refused, never replaced), no number that is
 * not a finite safe integer where it is integral, no JSON nested deeper than MAX_JSON_DEPTH or larger
 * than MAX_JSON_VALUES values.
 * Returns the bad fields by JSON pointer under `base`; empty when the value is fine.
 */
export function unsafeValues(value: unknown, base = ""): FieldError[] {
  const fields: FieldError[] = [];
  let count = 0;
  const visit = (v: unknown, pointer: string, depth: number): void => {
    if (fields.length >= 20) return;
    count += 1;
    if (count > MAX_JSON_VALUES) {
      // Named where the limit was passed, which is inside the value that is too large.
      if (count === MAX_JSON_VALUES + 1)
        fields.push({ pointer: pointer || "/", message: `Send at most ${MAX_JSON_VALUES} values in all.` });
      return;
    }
    if (typeof v === "string") {
      const fault = unsafeText(v);
      if (fault) fields.push({ pointer: pointer || "/", message: `This contains ${fault}` });
      return;
    }
    if (typeof v === "number") {
      if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v)))
        fields.push({
          pointer: pointer || "/",
          message: `Numbers must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`,
        });
      return;
    }
    if (v === null || typeof v !== "object") return;
    if (depth >= MAX_JSON_DEPTH) {
      fields.push({ pointer: pointer || "/", message: `This nests deeper than ${MAX_JSON_DEPTH} levels.` });
      return;
    }
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) visit(item, `${pointer}/${i}`, depth + 1);
      return;
    }
    for (const [key, item] of Object.entries(v)) {
      const fault = unsafeText(key);
      if (fault) fields.push({ pointer: pointer || "/", message: `A key contains ${fault}` });
      else visit(item, `${pointer}/${escapePointer(key)}`, depth + 1);
    }
  };
  visit(value, base, 0);
  return fields;
}

/** Throws BAD_USER_INPUT naming every unsafe value (see unsafeValues). */
export function assertSafeValues(value: unknown, base = ""): void {
  const fields = unsafeValues(value, base);
  if (fields.length > 0) throw badInput(fields);
}
