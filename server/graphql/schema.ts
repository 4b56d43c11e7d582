import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  buildASTSchema,
  buildSchema,
  type DocumentNode,
  GraphQLScalarType,
  type GraphQLSchema,
  Kind,
  parse,
  validateSchema,
  version,
} from "graphql";
import { SERVER_BUILD_DIR } from "../platform/server-build.mjs";

export const apiSdlPath = path.resolve(import.meta.dirname, "../../schemas/api.graphql");

export const apiSdl = () => readFileSync(apiSdlPath, "utf8");

/**
 * The SDL's parsed document once it built a valid schema, kept beside the service's bundle for the same
 * SDL bytes and graphql version: a restart builds the schema from it without parsing or checking the SDL
 * again (~0.15 s of its CPU). A schema that fails its checks is never recorded, so it fails every start.
 */
const checkedRecord = path.resolve(import.meta.dirname, "../..", SERVER_BUILD_DIR, "api-schema.json");

interface CheckedDocument {
  key: string;
  document: DocumentNode;
}

/** Each record as this process read or wrote it: each app built here gets a schema of its own from it. */
const checked = new Map<string, CheckedDocument | null>();

function readChecked(file: string, key: string): DocumentNode | null {
  let record = checked.get(file);
  if (record?.key !== key) {
    try {
      record = JSON.parse(readFileSync(file, "utf8")) as CheckedDocument;
    } catch {
      record = null;
    }
    checked.set(file, record);
  }
  return record?.key === key ? record.document : null;
}

function recordChecked(file: string, record: CheckedDocument): void {
  checked.set(file, record);
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const staging = `${file}.${process.pid}`;
    writeFileSync(staging, JSON.stringify(record));
    renameSync(staging, file);
  } catch {
    // A checkout that cannot be written checks its SDL at every start.
  }
}

/** The API's schema, a new object each call (Mercurius gives its fields their resolvers). Throws when it is not valid. */
export function loadApiSchema(): GraphQLSchema {
  return schemaOf(apiSdl(), checkedRecord);
}

/** The schema of `sdl`, from the document recorded in `recordFile` when that was checked on these bytes. */
export function schemaOf(sdl: string, recordFile: string): GraphQLSchema {
  const key = createHash("sha256").update(`${version}\0${sdl}`).digest("hex");
  const document = readChecked(recordFile, key);
  if (document) return buildASTSchema(document, { assumeValid: true, assumeValidSDL: true });
  const schema = buildSchema(sdl);
  const problems = validateSchema(schema);
  if (problems.length > 0) throw new Error(`the API's schema: ${problems.map((p) => p.message).join("; ")}`);
  recordChecked(recordFile, { key, document: parse(sdl, { noLocation: true }) });
  return schema;
}

export const DateTime = new GraphQLScalarType({
  name: "DateTime",
  description: "An ISO 8601 timestamp.",
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new TypeError("DateTime must be an ISO 8601 timestamp.");
    return date;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new TypeError("DateTime must be a string.");
    const date = new Date(ast.value);
    if (Number.isNaN(date.getTime())) throw new TypeError("DateTime must be an ISO 8601 timestamp.");
    return date;
  },
});

function literalValue(ast: import("graphql").ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalValue(f.value)]));
    case Kind.LIST:
      return ast.values.map(literalValue);
    default:
      return null;
  }
}

export const JSONScalar = new GraphQLScalarType({
  name: "JSON",
  description: "Any JSON value.",
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literalValue,
});
