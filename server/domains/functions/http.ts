import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Db } from "../../platform/db/index.ts";
import { AppError, type ErrorCode } from "../../platform/errors.ts";
import { PrototypeKeyRefused } from "../../platform/json-body.ts";
import { roleAtLeast } from "../../platform/roles.ts";
import { assertSafeValues, validateInput } from "../../platform/validation.ts";
import { SESSION_COOKIE } from "../account/service.ts";
import type { SessionCache } from "../account/sessions.ts";
import { blockPayload, latestBlock, type StreamsServices } from "../streams/index.ts";
import { type AccessKeys, API_KEY_HEADER, KeyRefusal } from "../tokens/keys.ts";
import { activate, type FunctionParams, type FunctionParamsJson, type FunctionRuns, usedMb } from "./service.ts";

/** Every function's HTTP address (relative to the service's base URL). */
export const callPath = (functionId: string) => `/functions/${encodeURIComponent(functionId)}/call`;

const STATUS: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UPSTREAM_FAILED: 502,
  INTERNAL: 500,
};

function refuse(reply: FastifyReply, error: AppError) {
  if (error instanceof KeyRefusal && error.retryAfter !== undefined)
    reply.header("retry-after", String(error.retryAfter));
  return reply.code(STATUS[error.code]).send({
    error: error.message,
    code: error.code,
    ...(error.fields.length > 0 && { fields: error.fields }),
  });
}

/**
 * What Fastify refuses before the handler runs (a body that is not JSON, too large, of another type),
 * in the words and shape of the route's other refusals, its status kept.
 */
function refusedBody(error: FastifyError, bodyLimit: number): { status: number; message: string } | undefined {
  if (typeof error.statusCode !== "number" || error.statusCode < 400 || error.statusCode >= 500) return undefined;
  const message =
    error.code === "FST_ERR_CTP_BODY_TOO_LARGE"
      ? `The call's body is too large: send at most ${Math.floor(bodyLimit / 1024)} KiB of JSON.`
      : error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE"
        ? "Send the call as application/json."
        : error.code === "FST_ERR_CTP_EMPTY_JSON_BODY"
          ? "Send a JSON object as the body ({} for no arguments)."
          : error instanceof PrototypeKeyRefused
            ? error.message
            : "The body is not valid JSON.";
  return { status: error.statusCode, message };
}

/** A refusal reading the call's block is named by the body's own field (`block`, not callFunction's `blockNumber`). */
function asCallField(error: AppError): AppError {
  if (!error.fields.some((f) => f.pointer === "/blockNumber")) return error;
  const fields = error.fields.map((f) => (f.pointer === "/blockNumber" ? { ...f, pointer: "/block" } : f));
  return new AppError(error.code, error.message, fields);
}

/**
 * `POST /functions/<id>/call`: JSON in ({ user_data, network, dataset, block }, all optional), JSON out.
 * It takes an ADMIN API key made for FUNCTIONS_REST in x-api-key, or the signed-in session of an ADMIN (as
 * callFunction does); a JSON body is required, so a cross-site form cannot call it with the user's cookie. A run is recorded with source RPC
 * and billed. The answer is 200 when main returned, 502 when it threw or ran out of time or memory (as a
 * cloud function's URL answers an unhandled error), and the API's error codes otherwise.
 */
export function registerFunctionCalls(
  app: FastifyInstance,
  deps: { db: Db; sessions: SessionCache; accessKeys: AccessKeys; services: StreamsServices; runs: FunctionRuns },
): void {
  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const refused = refusedBody(error, request.routeOptions.bodyLimit);
    if (!refused) throw error;
    return reply.code(refused.status).send({ error: refused.message, code: "BAD_USER_INPUT" });
  };
  // Any other method is refused here, not answered with the console's page by the fallback route.
  app.route({
    method: ["GET", "PUT", "PATCH", "DELETE"],
    url: "/functions/:id/call",
    handler: (_request, reply) =>
      reply
        .code(405)
        .header("allow", "POST")
        .send({ error: "Call a function with POST and a JSON body.", code: "BAD_USER_INPUT" }),
  });
  app.post<{ Params: { id: string } }>("/functions/:id/call", { errorHandler }, async (request, reply) => {
    try {
      if (!String(request.headers["content-type"] ?? "").startsWith("application/json"))
        throw new AppError("BAD_USER_INPUT", "Send the call as application/json.");
      // A key, when sent, is the only credential read: a bad one is refused, never replaced by the cookie.
      const key = request.headers[API_KEY_HEADER];
      const principal =
        key !== undefined
          ? await deps.accessKeys.authenticate(key, "FUNCTIONS_REST", request.ip)
          : await deps.sessions.resolve(request.cookies[SESSION_COOKIE]);
      if (!principal) throw new AppError("UNAUTHENTICATED", "Sign in first.");
      if (!roleAtLeast(principal.role, "ADMIN")) throw new AppError("FORBIDDEN", "Your role does not allow this.");
      const body = request.body ?? {};
      assertSafeValues(body);
      const call = validateInput("function#/$defs/httpCall", body);
      const userData = call.user_data ?? null;
      let params: FunctionParams | FunctionParamsJson = { data: null, metadata: {}, user_data: userData };
      let block: { network: string; dataset: string; blockNumber: number } | undefined;
      if (call.network && call.dataset && call.block !== undefined) {
        const reader = { db: deps.db, accountId: principal.accountId };
        const blockNumber =
          call.block === "latest" ? await latestBlock(deps.services, reader, call.network) : call.block;
        block = { network: call.network, dataset: call.dataset, blockNumber };
        params = { ...(await blockPayload(deps.services, reader, block)), user_data: userData };
      }
      const { activation, run } = await activate(deps.db, deps.runs, principal.accountId, request.params.id, params, {
        source: "RPC",
        ...block,
      });
      return reply.code(run.success ? 200 : 502).send({
        activationId: activation.id,
        functionId: activation.functionId,
        version: activation.version,
        success: run.success,
        result: run.resultJson === null ? null : (JSON.parse(run.resultJson) as unknown),
        error: run.error,
        errorKind: run.errorKind,
        logs: run.logs,
        duration: run.durationMs,
        memory: usedMb(run.memoryBytes),
        memoryLimit: run.memoryMb,
        billable: activation.billableGbSeconds,
      });
    } catch (e) {
      if (e instanceof AppError) return refuse(reply, asCallField(e));
      throw e;
    }
  });
}
