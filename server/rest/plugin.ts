// The REST API (/rest/v1): each route is an operation contract (contracts.ts) run through the one GraphQL
// executor with the API key's caller, so a REST call meets the same resolvers (role, input schema, account
// scope) and service functions as the console's (docs/decisions/1710-rest-runs-the-graphql-operations.md).
// What is REST's own lives here: keys from headers, paging links, idempotency keys, ETags, RateLimit-*
// headers and problem details.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Kind, type TypeNode, valueFromASTUntyped } from "graphql";
import type { Logger } from "pino";
import * as idempotency from "../domains/idempotency/store.ts";
import { type AccessKeys, API_KEY_HEADER, type KeyQuota, KeyRefusal } from "../domains/tokens/keys.ts";
import type { Context } from "../graphql/context.ts";
import { formatError } from "../graphql/errors.ts";
import { type KeptAnswer, newReadRecord, type ResponseCache } from "../graphql/response-cache.ts";
import type { AppConfig } from "../platform/config.ts";
import type { Db } from "../platform/db/index.ts";
import { AppError, type ErrorCode, type FieldError } from "../platform/errors.ts";
import { HOUSEKEEPING_EVERY_MS, runEvery } from "../platform/periodic.ts";
import { validateInput } from "../platform/validation.ts";
import { isRequiredVariable, loadRestOperations, namedType, type RestOperation, valueAt } from "./contracts.ts";
import { type Problem, problem, sendProblem } from "./problem.ts";

const IDEMPOTENCY_HEADER = "idempotency-key";
/** The generated OpenAPI document (npm run generate), served as written. */
const openapiFile = path.resolve(import.meta.dirname, "../../schemas/generated/openapi.json");

export interface RestDeps {
  db: Db;
  config: AppConfig;
  log: Logger;
  accessKeys: AccessKeys;
  /** The GraphQL API's kept answers: a REST read of snapshots only is kept the same way (its own keys). */
  answers: ResponseCache;
  /** The files contracts answer (`download`), by name: each made for the caller's account. */
  downloads: Record<string, Download>;
}

export type Download = (
  accountId: string,
  variables: Record<string, unknown>,
) => Promise<{ filename: string; body: Buffer }>;

interface FormattedError {
  message: string;
  extensions: { code?: unknown; fields?: unknown; requestId?: unknown };
}

/** The key a call carries: `x-api-key`, or `Authorization: Bearer <key>`. */
function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers[API_KEY_HEADER];
  if (typeof header === "string") return header;
  const authorization = request.headers.authorization;
  const bearer = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return bearer ? bearer[1] : undefined;
}

/** A query parameter's text as its variable's GraphQL type takes it; a FieldError when it cannot be. */
function coerceParameter(name: string, type: TypeNode, raw: unknown): unknown {
  const inner = type.kind === Kind.NON_NULL_TYPE ? type.type : type;
  if (inner.kind === Kind.LIST_TYPE) {
    const items = (Array.isArray(raw) ? raw : [raw]).flatMap((item) => String(item).split(","));
    return items.map((item) => coerceParameter(name, inner.type, item));
  }
  const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (typeof text !== "string") throw new AppError("BAD_USER_INPUT", `${name} must be given once.`);
  switch (namedType(inner)) {
    case "Int":
      if (!/^-?\d{1,15}$/.test(text)) throw fieldError(name, "must be a whole number");
      return Number(text);
    case "Float":
      if (text.trim() === "" || !Number.isFinite(Number(text))) throw fieldError(name, "must be a number");
      return Number(text);
    case "Boolean":
      if (text !== "true" && text !== "false") throw fieldError(name, "must be true or false");
      return text === "true";
    default:
      return text;
  }
}

const fieldError = (name: string, message: string) =>
  new AppError("BAD_USER_INPUT", `The parameter ${name} ${message}.`, [{ pointer: `/${name}`, message }]);

/** The variables of a call: its path parameters, its query parameters as typed, and its body. */
function variablesOf(operation: RestOperation, request: FastifyRequest): Record<string, unknown> {
  const params = request.params as Record<string, string>;
  const query = request.query as Record<string, unknown>;
  const variables: Record<string, unknown> = {};
  const fields: FieldError[] = [];
  const byName = new Map(operation.variables.map((v) => [v.variable.name.value, v]));
  for (const name of Object.keys(query)) {
    const variable = byName.get(name);
    if (!variable || operation.pathParams.includes(name) || name === operation.body?.variable) {
      fields.push({ pointer: `/${name}`, message: "is not a parameter of this operation" });
      continue;
    }
    try {
      variables[name] = coerceParameter(name, variable.type, query[name]);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      fields.push(...(error.fields.length ? error.fields : [{ pointer: `/${name}`, message: error.message }]));
    }
  }
  if (fields.length > 0) throw new AppError("BAD_USER_INPUT", "The query parameters are not valid.", fields);
  const body = operation.body ? bodyOf(operation, request, params) : undefined;
  if (operation.body?.variable) variables[operation.body.variable] = body;
  else if (body) Object.assign(variables, body);
  for (const param of operation.pathParams) if (byName.has(param)) variables[param] = params[param];
  // Defaults written out: the jitted executor does not apply a document's variable defaults.
  for (const variable of operation.variables)
    if (variable.defaultValue && variables[variable.variable.name.value] === undefined)
      variables[variable.variable.name.value] = valueFromASTUntyped(variable.defaultValue);
  return variables;
}

/**
 * The body, checked against the contract's entity input schema (the one the resolver checks it with): path
 * parameters the schema names, or that belong in the body's variable, are filled in from the path, so
 * pointers name the body's own fields.
 */
function bodyOf(operation: RestOperation, request: FastifyRequest, params: Record<string, string>) {
  const declared = operation.body;
  const body = request.body;
  if (!declared || typeof body !== "object" || body === null || Array.isArray(body))
    throw new AppError("BAD_USER_INPUT", "Send the body as a JSON object (content-type: application/json).");
  const withPath: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const named = inputProperties(declared.schema);
  const variableNames = new Set(operation.variables.map((v) => v.variable.name.value));
  for (const param of operation.pathParams)
    if (named.has(param) || (declared.variable && !variableNames.has(param))) withPath[param] = params[param];
  return validateInput(declared.schema, withPath) as Record<string, unknown>;
}

const inputPropertiesCache = new Map<string, Set<string>>();

/** The property names an entity input schema declares. */
function inputProperties(ref: string): Set<string> {
  let names = inputPropertiesCache.get(ref);
  if (!names) {
    const [entity, pointer = ""] = ref.split("#");
    const file = path.resolve(import.meta.dirname, `../../schemas/entities/${entity}.schema.json`);
    let node = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    for (const part of pointer.split("/").filter(Boolean)) node = node[part] as Record<string, unknown>;
    names = new Set(Object.keys((node.properties as object | undefined) ?? {}));
    inputPropertiesCache.set(ref, names);
  }
  return names;
}

/** A GraphQL error's pointers made relative to the body when they name its variable (`/input/chain` → `/chain`). */
function pointersOf(operation: RestOperation, fields: unknown): FieldError[] {
  if (!Array.isArray(fields)) return [];
  const prefix = operation.body?.variable ? `/${operation.body.variable}` : null;
  return (fields as FieldError[]).map((field) => ({
    pointer:
      prefix && (field.pointer === prefix || field.pointer.startsWith(`${prefix}/`))
        ? field.pointer.slice(prefix.length) || "/"
        : field.pointer,
    message: field.message,
  }));
}

function problemOfErrors(operation: RestOperation, errors: readonly FormattedError[]): Problem {
  const first = errors[0];
  const code = (first?.extensions.code as ErrorCode | undefined) ?? "INTERNAL";
  const fields = errors.flatMap((e) => pointersOf(operation, e.extensions.fields));
  const requestId = typeof first?.extensions.requestId === "string" ? first.extensions.requestId : undefined;
  return problem(code, first?.message ?? "The request failed.", { errors: fields, requestId });
}

function problemOfAppError(error: AppError, status?: number): Problem {
  return problem(error.code, error.message, { status, errors: error.fields });
}

function setQuotaHeaders(reply: FastifyReply, quota: KeyQuota | undefined) {
  if (!quota) return;
  reply.header("ratelimit-limit", String(quota.limit));
  reply.header("ratelimit-remaining", String(quota.remaining));
  reply.header("ratelimit-reset", String(quota.resetSeconds));
}

/** The link to the next page: this URL with the cursor variable set to the page's last cursor. */
function nextLink(request: FastifyRequest, after: string, cursor: string): string {
  const url = new URL(request.url, "http://host");
  url.searchParams.set(after, cursor);
  return `<${url.pathname}${url.search}>; rel="next"`;
}

const hashOf = (text: string) => createHash("sha256").update(text).digest("base64url");

export async function restPlugin(app: FastifyInstance, { deps }: { deps: RestDeps }): Promise<void> {
  const { db, config, log, accessKeys, answers, downloads } = deps;
  /** The ETag of each kept answer, made on its first hit. */
  const keptTags = new WeakMap<KeptAnswer, string>();
  const operations = loadRestOperations();
  for (const operation of operations)
    if (operation.download && !downloads[operation.download.name])
      throw new Error(`REST ${operation.id} answers the download ${operation.download.name}, which no domain provides`);
  const openapi = readFileSync(openapiFile, "utf8");
  const openapiTag = `"${hashOf(openapi)}"`;

  const noSuchOperation = (request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(reply, problem("NOT_FOUND", `No operation of this API is ${request.method} ${request.url}.`));
  app.setNotFoundHandler(noSuchOperation);
  // A route as well: the console's not-found handler, set on the root after this plugin, would answer first.
  app.route({
    method: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    url: "/*",
    handler: noSuchOperation,
  });
  // Refusals before a route runs (a body that is not JSON, too large) and failures no route caught.
  app.setErrorHandler((error: { statusCode?: number; message?: string }, request, reply) => {
    const status = error.statusCode;
    if (typeof status === "number" && status >= 400 && status < 500)
      return sendProblem(reply, problem("BAD_USER_INPUT", error.message ?? "The request is not valid.", { status }));
    log.error({ err: error, reqId: request.id }, "REST request failed");
    return sendProblem(reply, problem("INTERNAL", "Something went wrong on our side.", { requestId: request.id }));
  });

  // Expired Idempotency-Keys of every account, those that send nothing more included (a claim only takes
  // over its own key's expired row): bounded statements until one finds fewer than a batch.
  const housekeeping = runEvery(
    HOUSEKEEPING_EVERY_MS,
    async () => {
      while ((await idempotency.sweepExpiredKeys(db)) === idempotency.SWEEP_BATCH);
    },
    (error) => log.warn({ err: error }, "housekeeping of idempotency keys failed"),
  );
  app.addHook("onClose", async () => housekeeping.stop());

  app.get("/openapi.json", (request, reply) => {
    if (request.headers["if-none-match"] === openapiTag) return reply.code(304).send();
    return reply.header("etag", openapiTag).type("application/json").send(openapi);
  });

  for (const operation of operations) {
    app.route({
      method: operation.method,
      url: operation.path.replace(/\{([A-Za-z0-9]+)\}/g, ":$1"),
      handler: (request, reply) => serve(operation, request, reply),
    });
  }

  async function serve(operation: RestOperation, request: FastifyRequest, reply: FastifyReply) {
    const key = keyOf(request);
    if (key === undefined)
      return sendProblem(reply, problem("UNAUTHENTICATED", "Send an API key in x-api-key (or Authorization: Bearer)."));
    let caller: Awaited<ReturnType<AccessKeys["authorize"]>>;
    try {
      caller = await accessKeys.authorize(key, operation.application, request.ip);
    } catch (error) {
      if (!(error instanceof KeyRefusal)) throw error;
      if (error.retryAfter !== undefined) {
        reply.header("retry-after", String(error.retryAfter));
        reply.header("ratelimit-remaining", "0");
        reply.header("ratelimit-reset", String(error.retryAfter));
      }
      return sendProblem(reply, problemOfAppError(error));
    }
    setQuotaHeaders(reply, caller.quota);
    const { principal } = caller;

    let variables: Record<string, unknown>;
    try {
      variables = variablesOf(operation, request);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // A body or parameter the schema refuses is 422 naming each field; one that is not even a JSON object 400.
      return sendProblem(reply, problemOfAppError(error, error.fields.length ? 422 : 400));
    }
    for (const variable of operation.variables)
      if (isRequiredVariable(variable) && variables[variable.variable.name.value] === undefined) {
        const name = variable.variable.name.value;
        return sendProblem(
          reply,
          problem("BAD_USER_INPUT", `The parameter ${name} is required.`, {
            status: 400,
            errors: [{ pointer: `/${name}`, message: "is required" }],
          }),
        );
      }

    const idempotencyKey = operation.method === "POST" ? request.headers[IDEMPOTENCY_HEADER] : undefined;
    if (typeof idempotencyKey === "string") {
      if (idempotencyKey.length === 0 || idempotencyKey.length > 255)
        return sendProblem(
          reply,
          problem("BAD_USER_INPUT", "An Idempotency-Key is 1 to 255 characters.", { status: 400 }),
        );
      const requestHash = hashOf(`${operation.id}\n${request.url}\n${JSON.stringify(request.body ?? null)}`);
      const claim = await idempotency.claimKey(db, principal.accountId, idempotencyKey, requestHash);
      if (claim !== true) {
        if (claim.requestHash !== requestHash)
          return sendProblem(
            reply,
            problem("BAD_USER_INPUT", "This Idempotency-Key was used with another request.", {
              errors: [{ pointer: "/", message: "differs from the request first sent with this Idempotency-Key" }],
            }),
          );
        if (claim.status === null)
          return sendProblem(reply, problem("CONFLICT", "A request with this Idempotency-Key is still running."));
        reply.header("idempotent-replayed", "true").code(claim.status);
        if (claim.status === 204) return reply.send();
        return reply.type(claim.status >= 400 ? "application/problem+json" : "application/json").send(claim.body);
      }
      const answered = await run(operation, request, reply, principal, variables).catch(async (error) => {
        await idempotency.releaseKey(db, principal.accountId, idempotencyKey);
        throw error;
      });
      if (reply.statusCode >= 500) await idempotency.releaseKey(db, principal.accountId, idempotencyKey);
      // Creates are mutations: their answers are texts, never a kept read's bytes.
      else
        await idempotency.keepAnswer(db, principal.accountId, idempotencyKey, reply.statusCode, String(answered ?? ""));
      return reply.send(answered);
    }
    const answered = await run(operation, request, reply, principal, variables);
    return reply.send(answered);
  }

  /** Runs the operation and sets the reply's status, type and headers; answers the body's text. */
  async function run(
    operation: RestOperation,
    request: FastifyRequest,
    reply: FastifyReply,
    principal: NonNullable<Context["principal"]>,
    variables: Record<string, unknown>,
  ): Promise<string | Buffer | undefined> {
    const reads = newReadRecord();
    // Kept under a host of its own: a REST answer is not the GraphQL answer to the same operation.
    const kept =
      operation.kind === "query" && !operation.download
        ? answers.lookup(
            {
              body: { query: operation.source, operationName: operation.operation, variables },
              protocol: request.protocol,
              host: `rest ${request.host}`,
            },
            principal,
            reads,
          )
        : null;
    if (kept) {
      let etag = keptTags.get(kept);
      if (!etag) {
        etag = `"${createHash("sha256").update(kept.body).digest("base64url")}"`;
        keptTags.set(kept, etag);
      }
      reply.code(200).type("application/json; charset=utf-8").header("etag", etag);
      if (request.headers["if-none-match"] === etag) {
        reply.code(304);
        return undefined;
      }
      return kept.body;
    }
    const context: Context = {
      db,
      config,
      log,
      principal,
      request,
      reply,
      loaders: new Map(),
      reads,
    };
    let execution: { data?: Record<string, unknown> | null; errors?: readonly FormattedError[] };
    try {
      // The context is ours; mercurius adds its own fields to it as it does for /graphql.
      execution = await app.graphql(operation.source, context as never, variables, operation.operation);
    } catch (error) {
      // Refused before execution: a variable its type refused (pointers as GraphQL gives them).
      const errors = formatError(error, { production: config.production, log, requestId: request.id });
      const answer = problemOfErrors(operation, errors);
      reply.code(answer.status).type("application/problem+json");
      return JSON.stringify(answer);
    }
    if (execution.errors?.length) {
      const answer = problemOfErrors(operation, execution.errors);
      reply.code(answer.status).type("application/problem+json");
      return JSON.stringify(answer);
    }
    const data = execution.data ?? {};
    const status = operation.status ?? 200;
    reply.code(status);
    if (status === 204) return undefined;
    if (operation.download) {
      const file = await downloads[operation.download.name](principal.accountId, variables);
      reply
        .type(operation.download.mediaType)
        .header("content-disposition", `attachment; filename="${file.filename}"`)
        .header("cache-control", "private, no-store");
      return file.body;
    }
    let body: unknown;
    if (operation.list) {
      const { rows, cursor, hasMore, after } = operation.list;
      const next = cursor ? valueAt(data, cursor) : null;
      const more = hasMore ? valueAt(data, hasMore) === true : false;
      const nextCursor = more && typeof next === "string" ? next : null;
      if (nextCursor && after) reply.header("link", nextLink(request, after, nextCursor));
      body = { data: valueAt(data, rows), nextCursor };
    } else {
      body = operation.result ? valueAt(data, operation.result) : data;
    }
    const text = JSON.stringify(body);
    answers.keep(reads, status, text);
    reply.type("application/json; charset=utf-8");
    if (request.method === "GET") {
      const etag = `"${hashOf(text)}"`;
      reply.header("etag", etag);
      if (request.headers["if-none-match"] === etag) {
        reply.code(304);
        return undefined;
      }
    }
    return text;
  }
}
