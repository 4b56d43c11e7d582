import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { EntityInputRef, EntityInputs } from "../../schemas/generated/entities.ts";
import { badInput, type FieldError } from "./errors.ts";

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

/** The one annotation of our own in entity schemas: how the console names an enum's values. */
export const ENUM_LABELS_KEYWORD = {
  keyword: "x-enumLabels",
  metaSchema: { type: "object", additionalProperties: { type: "string" } },
};

export function createAjv(schemas: EntitySchemas): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: false });
  addFormats.default(ajv);
  ajv.addKeyword(ENUM_LABELS_KEYWORD);
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
