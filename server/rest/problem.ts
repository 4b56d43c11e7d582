// Errors as RFC 9457 problem details: one shape for every refusal of the REST API, built from the codes and
// field pointers the GraphQL API gives (AppError's, through formatError), so both APIs say the same.
import type { FastifyReply } from "fastify";
import type { ErrorCode, FieldError } from "../platform/errors.ts";

export const PROBLEM_TYPE = "application/problem+json";

/** The HTTP status of each error code. BAD_USER_INPUT is 422 for a body or value the schema refuses. */
export const STATUS_OF_CODE: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 422,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  UPSTREAM_FAILED: 502,
  INTERNAL: 500,
};

const TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflict",
  415: "Unsupported media type",
  422: "Unprocessable content",
  429: "Too many requests",
  500: "Internal server error",
  502: "Bad gateway",
};

export interface Problem {
  type: "about:blank";
  title: string;
  status: number;
  detail: string;
  /** The error code GraphQL gives the same failure (extensions.code). */
  code: ErrorCode;
  /** Each bad field: its JSON pointer in the body (or `/name` of a path or query parameter). */
  errors?: FieldError[];
  /** An internal failure's request id, which finds its log line. */
  requestId?: string;
}

export function problem(
  code: ErrorCode,
  detail: string,
  options: { status?: number; errors?: FieldError[]; requestId?: string } = {},
): Problem {
  const status = options.status ?? STATUS_OF_CODE[code];
  return {
    type: "about:blank",
    title: TITLES[status] ?? "Error",
    status,
    detail,
    code,
    ...(options.errors && options.errors.length > 0 && { errors: options.errors }),
    ...(options.requestId && { requestId: options.requestId }),
  };
}

export function sendProblem(reply: FastifyReply, body: Problem): FastifyReply {
  return reply.code(body.status).type(PROBLEM_TYPE).send(JSON.stringify(body));
}
