/**
 * The REST API's OpenAPI 3.1 document (schemas/generated/openapi.json), made from the operation contracts
 * (schemas/rest/*.rest.json and their GraphQL documents), the SDL (variable types become parameter schemas)
 * and the entity JSON Schemas (bodies and answers), so nothing of it is written by hand. Each contract's
 * document is validated against the SDL here: a REST operation the GraphQL API cannot run is refused.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import {
  buildSchema,
  type GraphQLSchema,
  isEnumType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionNode,
  type TypeNode,
  validate,
} from "graphql";
import { apiSdl } from "../../server/graphql/schema.ts";
import { loadEntitySchemas } from "../../server/platform/validation.ts";
import {
  isRequiredVariable,
  loadRestOperations,
  loadRestResources,
  OPENAPI_PATH,
  REST_PREFIX,
  type RestOperation,
} from "../../server/rest/contracts.ts";
import type { GeneratedFile } from "./index.ts";

type Json = Record<string, unknown>;

const biome = path.resolve(import.meta.dirname, "../../node_modules/.bin/biome");

const componentRef = (entity: string, pointer = "") => `#/components/schemas/${entity}${pointer}`;

/** An entity schema's `$ref`s made to point into the document's components. */
function rewriteRefs(node: unknown, entity: string): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, entity));
  if (typeof node !== "object" || node === null) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      const [target, pointer = ""] = value.split("#");
      out.$ref = componentRef(target === "" ? entity : target, pointer);
    } else if (key !== "$schema" && key !== "$id") out[key] = rewriteRefs(value, entity);
  }
  return out;
}

function schemaAt(entities: Record<string, Json>, ref: string): { entity: string; node: Json } {
  const [entity, pointer = ""] = ref.split("#");
  let node = entities[entity];
  if (!node) throw new Error(`no entity schema ${entity} (named by ${ref})`);
  for (const part of pointer.split("/").filter(Boolean)) node = node[part] as Json;
  if (!node) throw new Error(`no schema at ${ref}`);
  return { entity, node };
}

/** A GraphQL variable's type as a JSON Schema (enums with their SDL values). */
function typeSchema(schema: GraphQLSchema, type: TypeNode): Json {
  if (type.kind === Kind.NON_NULL_TYPE) return typeSchema(schema, type.type);
  if (type.kind === Kind.LIST_TYPE) return { type: "array", items: typeSchema(schema, type.type) };
  const name = type.name.value;
  const named = schema.getType(name);
  if (isEnumType(named)) return { type: "string", enum: named.getValues().map((v) => v.name) };
  switch (name) {
    case "Int":
      return { type: "integer" };
    case "Float":
      return { type: "number" };
    case "Boolean":
      return { type: "boolean" };
    case "DateTime":
      return { type: "string", format: "date-time" };
    default:
      return { type: "string" };
  }
}

/** The fields the operation selects on its answer (through its fragments too): always present in it. */
function selectedFields(operation: RestOperation): string[] {
  const document = parse(operation.source);
  const definition = document.definitions[0] as OperationDefinitionNode;
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const fieldsOf = (selections: readonly SelectionNode[]): string[] =>
    selections.flatMap((s) => {
      if (s.kind === Kind.FIELD) return [(s.alias ?? s.name).value];
      if (s.kind === Kind.FRAGMENT_SPREAD) return fieldsOf(fragments.get(s.name.value)?.selectionSet.selections ?? []);
      return fieldsOf(s.selectionSet.selections);
    });
  // A dotted result (`viewer.subscription`) is followed field by field.
  let selections: readonly SelectionNode[] | undefined = definition.selectionSet.selections;
  for (const part of (operation.result ?? "").split(".")) {
    const field: SelectionNode | undefined = selections?.find(
      (s) => s.kind === Kind.FIELD && (s.alias ?? s.name).value === part,
    );
    selections = field?.kind === Kind.FIELD ? field.selectionSet?.selections : undefined;
  }
  return selections ? fieldsOf(selections) : [];
}

const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

function operationObject(api: GraphQLSchema, entities: Record<string, Json>, operation: RestOperation): Json {
  const variableNames = new Set(operation.variables.map((v) => v.variable.name.value));
  const parameters: Json[] = operation.pathParams.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  for (const variable of operation.variables) {
    const name = variable.variable.name.value;
    if (operation.pathParams.includes(name) || name === operation.body?.variable) continue;
    if (operation.body && !operation.body.variable) {
      const bodyFields = schemaAt(entities, operation.body.schema).node.properties as Json | undefined;
      if (bodyFields && name in bodyFields) continue;
    }
    parameters.push({
      name,
      in: "query",
      required: isRequiredVariable(variable),
      schema: typeSchema(api, variable.type),
      ...(variable.type.kind === Kind.LIST_TYPE ||
      (variable.type.kind === Kind.NON_NULL_TYPE && variable.type.type.kind === Kind.LIST_TYPE)
        ? { style: "form", explode: false }
        : {}),
    });
  }
  if (operation.method === "POST")
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: "Retrying with the same key and body answers the first answer again (kept 24 hours).",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    });

  const responses: Json = {};
  const status = String(operation.status ?? 200);
  const entityRef = operation.entity ? { $ref: componentRef(...splitRef(operation.entity)) } : {};
  if (status === "204") responses[status] = { description: "Done." };
  else if (operation.download)
    responses[status] = {
      description: "The file.",
      content: {
        [operation.download.mediaType]: {
          schema: { type: "string", contentMediaType: operation.download.mediaType },
        },
      },
    };
  else if (operation.list)
    responses[status] = {
      description: "A page of rows; `nextCursor` (and the Link header) continue it.",
      headers: {
        Link: { description: 'The next page, rel="next".', schema: { type: "string" } },
        ETag: { schema: { type: "string" } },
      },
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["data", "nextCursor"],
            properties: { data: { type: "array", items: entityRef }, nextCursor: { type: ["string", "null"] } },
          },
        },
      },
    };
  else {
    const required = selectedFields(operation);
    responses[status] = {
      description: "The resource.",
      ...(operation.method === "GET" && { headers: { ETag: { schema: { type: "string" } } } }),
      content: {
        "application/json": { schema: required.length ? { allOf: [entityRef, { required }] } : entityRef },
      },
    };
  }
  if (operation.method === "GET") responses["304"] = { description: "Not modified (If-None-Match matched)." };
  responses["400"] = problemResponse("A parameter or body that is not even of the right shape.");
  responses["401"] = problemResponse("No usable API key (the same answer for a malformed, unknown or revoked one).");
  responses["403"] = problemResponse("The key is not made for this API, or its role may not do this.");
  responses["404"] = problemResponse("No such resource in the key's account.");
  if (operation.body || variableNames.size > 0)
    responses["422"] = problemResponse("A value the schema refuses: `errors` names each field by JSON pointer.");
  if (operation.method === "POST")
    responses["409"] = problemResponse("A conflict, or the same Idempotency-Key still running.");
  responses["429"] = problemResponse("Over the key's limit per client IP (Retry-After says when to retry).");

  let requestBody: Json | undefined;
  if (operation.body) {
    const { entity, node } = schemaAt(entities, operation.body.schema);
    const fromPath = new Set(operation.pathParams);
    const properties = Object.fromEntries(
      Object.entries((node.properties as Json | undefined) ?? {}).filter(([name]) => !fromPath.has(name)),
    );
    const schema = {
      ...node,
      properties,
      ...(Array.isArray(node.required) && { required: node.required.filter((n: string) => !fromPath.has(n)) }),
    };
    requestBody = {
      required: true,
      content: {
        "application/json": {
          schema: rewriteRefs(schema, entity),
          ...(operation.body.example && { example: operation.body.example }),
        },
      },
    };
  }
  return {
    operationId: operation.id,
    summary: operation.summary,
    tags: [operation.tag],
    "x-application": operation.application,
    "x-graphql-operation": operation.operation,
    ...(parameters.length > 0 && { parameters }),
    ...(requestBody && { requestBody }),
    responses,
  };
}

function splitRef(ref: string): [string, string] {
  const [entity, pointer = ""] = ref.split("#");
  return [entity, pointer];
}

/** The document, from the contracts as they are now. */
export function openapiDocument(): Json {
  const api = buildSchema(apiSdl());
  const entities = loadEntitySchemas() as Record<string, Json>;
  const operations = loadRestOperations();
  for (const operation of operations) {
    const errors = validate(api, parse(operation.source));
    if (errors.length) throw new Error(`${operation.operation}: ${errors.map((e) => e.message).join("; ")}`);
  }
  const paths: Record<string, Json> = {
    [OPENAPI_PATH.slice(REST_PREFIX.length)]: {
      get: {
        operationId: "getOpenApiDocument",
        summary: "This document",
        tags: ["Reference"],
        security: [],
        responses: {
          "200": {
            description: "The OpenAPI 3.1 document.",
            content: { "application/json": { schema: { type: "object" } } },
          },
          "304": { description: "Not modified (If-None-Match matched)." },
        },
      },
    },
  };
  for (const operation of operations) {
    const methods = paths[operation.path] ?? {};
    methods[operation.method.toLowerCase()] = operationObject(api, entities, operation);
    paths[operation.path] = methods;
  }
  const schemas: Json = Object.fromEntries(
    Object.entries(entities).map(([name, schema]) => [name, rewriteRefs(schema, name)]),
  );
  schemas.Problem = {
    type: "object",
    description: "RFC 9457 problem details; `code` is the error code GraphQL gives the same failure.",
    required: ["type", "title", "status", "detail", "code"],
    properties: {
      type: { type: "string" },
      title: { type: "string" },
      status: { type: "integer" },
      detail: { type: "string" },
      code: {
        enum: [
          "BAD_USER_INPUT",
          "UNAUTHENTICATED",
          "FORBIDDEN",
          "NOT_FOUND",
          "CONFLICT",
          "RATE_LIMITED",
          "UPSTREAM_FAILED",
          "INTERNAL",
        ],
      },
      errors: {
        type: "array",
        items: {
          type: "object",
          required: ["pointer", "message"],
          properties: { pointer: { type: "string" }, message: { type: "string" } },
        },
      },
      requestId: { type: "string" },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "Nodeplane REST API",
      version: "1",
      description:
        "Every product of the console, for scripts. Send an API key (Account → API keys) made for the resource's application in `x-api-key` or `Authorization: Bearer`. Lists page with `nextCursor` and a Link header; creates take an Idempotency-Key; reads answer an ETag; errors are RFC 9457 problem details.",
    },
    servers: [{ url: REST_PREFIX }],
    security: [{ apiKey: [] }, { bearer: [] }],
    tags: [
      ...loadRestResources().map((r) => ({ name: r.tag, description: r.description, "x-application": r.application })),
      { name: "Reference", description: "This document." },
    ],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        bearer: { type: "http", scheme: "bearer" },
      },
      schemas,
    },
  };
}

const OPENAPI_FILE = "schemas/generated/openapi.json";

/** The JSON as the repository formats it (biome), so `biome check` passes on the generated file. */
function formatJson(text: string): string {
  const result = spawnSync(biome, ["format", `--stdin-file-path=${OPENAPI_FILE}`], { input: text, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`biome could not format ${OPENAPI_FILE}: ${result.stderr}`);
  return result.stdout;
}

export const generateOpenapi = async (): Promise<GeneratedFile[]> => [
  { path: OPENAPI_FILE, content: formatJson(JSON.stringify(openapiDocument())) },
];
