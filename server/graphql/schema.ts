import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, GraphQLScalarType, type GraphQLSchema, Kind } from "graphql";

export const apiSdlPath = path.resolve(import.meta.dirname, "../../schemas/api.graphql");

export const apiSdl = () => readFileSync(apiSdlPath, "utf8");

export function loadApiSchema(): GraphQLSchema {
  return buildSchema(apiSdl());
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
