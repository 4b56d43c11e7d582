/**
 * Every answer the proxy gives on its own (not the upstream's), with its HTTP status and JSON-RPC code.
 * Documented for users in server/dataplane/proxy/README.md; keep the two in step.
 * Refusals of a whole request use a non-200 HTTP status; refusals of one call (a method that is
 * disabled, filtered or on the wrong chain) are JSON-RPC errors in a 200 answer, so a batch can mix them.
 */
export const refusals = {
  NOT_FOUND: { http: 404, code: -32040, message: "No endpoint answers at this address." },
  PAUSED: {
    http: 423,
    code: -32041,
    message: "This endpoint is paused. Un-pause it in the console to serve requests.",
  },
  ARCHIVED: { http: 410, code: -32042, message: "This endpoint is archived and no longer serves requests." },
  DISABLED: { http: 403, code: -32043, message: "This endpoint is disabled." },
  SUSPENDED: {
    http: 402,
    code: -32044,
    message: "This endpoint is suspended: the account's usage is suspended (check billing).",
  },
  LIMIT_REACHED: { http: 429, code: -32045, message: "This endpoint reached its plan's monthly request limit." },
  CANCELED: { http: 410, code: -32046, message: "This endpoint's subscription is canceled." },
  TERMINATED: { http: 410, code: -32047, message: "This endpoint is terminated." },
  TOO_MANY_WEBSOCKETS: {
    http: 429,
    code: -32048,
    message: "This account has as many WebSocket connections open as it may: close one before opening another.",
  },
  TOKEN_REQUIRED: {
    http: 401,
    code: -32001,
    message: "A valid token is required: put it in the URL path or an x-token header.",
  },
  JWT_REQUIRED: { http: 401, code: -32002, message: "A valid JWT is required in an Authorization: Bearer header." },
  IP_NOT_ALLOWED: {
    http: 403,
    code: -32003,
    message: "Requests from this IP address are not allowed on this endpoint.",
  },
  REFERRER_NOT_ALLOWED: {
    http: 403,
    code: -32004,
    message: "Requests from this origin or referrer are not allowed on this endpoint.",
  },
  METHOD_NOT_IN_FILTER: { http: 200, code: -32005, message: "This method is not in the endpoint's request filter." },
  METHOD_DISABLED: { http: 200, code: -32006, message: "This method is disabled on this endpoint." },
  ADDON_REQUIRED: {
    http: 200,
    code: -32009,
    message: "This method needs an add-on that is not installed on this endpoint.",
  },
  // Geth's code for a method it does not serve ("the method X does not exist/is not available").
  METHOD_NOT_AVAILABLE: { http: 200, code: -32601, message: "This method is not available on this service." },
  WRONG_CHAIN: {
    http: 200,
    code: -32007,
    message: "The transaction's chain id does not match this endpoint's network.",
  },
  PARSE_ERROR: { http: 400, code: -32700, message: "Parse error: the body is not JSON." },
  INVALID_REQUEST: {
    http: 400,
    code: -32600,
    message: "Invalid request: expected a JSON-RPC object or a non-empty array of them.",
  },
  NO_UPSTREAM: { http: 503, code: -32090, message: "No upstream node is configured for this network." },
  UPSTREAM_FAILED: { http: 502, code: -32091, message: "The upstream node did not answer." },
  INTERNAL: { http: 500, code: -32603, message: "Internal error in the proxy." },
  METHOD_NOT_ALLOWED: { http: 405, code: -32600, message: "Send JSON-RPC with POST, or open a WebSocket." },
  // Geth's answer to a batch over its BatchRequestLimit, word for word (rpc/handler.go, errMsgBatchTooLarge):
  // HTTP 200 and a one-element array, so clients that read a batch's answer as an array see the error.
  BATCH_TOO_LARGE: { http: 200, code: -32600, message: "batch too large" },
} as const;

export type RefusalKind = keyof typeof refusals;

export interface Refusal {
  kind: RefusalKind | string;
  http: number;
  code: number;
  message: string;
  /** Extra detail that is safe to show to the caller (e.g. the network name). */
  data?: unknown;
  /** A rate limit's: milliseconds until the limiter frees (an HTTP answer says it in Retry-After). */
  retryAfterMs?: number;
}

export function refusal(kind: RefusalKind, message?: string, data?: unknown): Refusal {
  const r = refusals[kind];
  return { kind, http: r.http, code: r.code, message: message ?? r.message, data };
}

export type JsonRpcId = string | number | null;

export interface JsonRpcCall {
  jsonrpc?: string;
  id?: JsonRpcId;
  method: string;
  params?: unknown;
}

export function errorObject(id: JsonRpcId | undefined, r: Refusal): string {
  const error: Record<string, unknown> = { code: r.code, message: r.message };
  if (r.data !== undefined) error.data = r.data;
  return JSON.stringify({ jsonrpc: "2.0", id: id ?? null, error });
}

/**
 * The answer to a batch of more calls than the limit, as Geth gives it: an array holding one error object
 * with the id of the batch's first call (null when none has one). `data.limit` says how many are accepted.
 */
export function batchTooLarge(calls: unknown[], limit: number): { refusal: Refusal; body: string } {
  const first = calls.find((c): c is JsonRpcCall => isCall(c) && c.id !== undefined);
  const r = refusal("BATCH_TOO_LARGE", undefined, { limit });
  return { refusal: r, body: `[${errorObject(first?.id, r)}]` };
}

export function isCall(value: unknown): value is JsonRpcCall {
  return typeof value === "object" && value !== null && typeof (value as JsonRpcCall).method === "string";
}
