import type { Refusal } from "../proxy/jsonrpc.ts";

/**
 * What one call counts as in usage: the one counting rule the meter applies, whose counts the usage
 * screens, endpoint metrics and invoices read (docs/decisions/0600-usage-counts-what-was-served.md).
 * - SERVED: forwarded and answered by the node with a result, or with an error about the call itself
 *   (a revert, bad params): the node did the work. Billed at the credit table's price.
 * - SUBSCRIPTION_EVENT: a notification the node pushed on an `eth_subscribe` and the proxy delivered to the
 *   client. Billed per event delivered, as a call of `eth_subscription`.
 * - REFUSED: the proxy answered itself (endpoint status, security, rate limits, disabled or filtered
 *   methods, no upstream, the node not answering). Not billed.
 * - UPSTREAM_ERROR: the node answered an HTTP error status (it served nothing). Not billed; counted with
 *   the refused calls.
 * - MALFORMED: not JSON-RPC (not JSON, not a call, an empty or too large batch or body), whether the proxy
 *   or the node said so. Not billed.
 * - UNKNOWN_METHOD: the node answered "method not found" (-32601). Not billed.
 */
export type CallCount = "SERVED" | "SUBSCRIPTION_EVENT" | "REFUSED" | "UPSTREAM_ERROR" | "MALFORMED" | "UNKNOWN_METHOD";

/** The usage counter each kind of call adds to (usage_minutes: requests, refused, malformed, unknown_method). */
export type UsageCounter = "requests" | "refused" | "malformed" | "unknownMethod";

export interface CallClass {
  count: CallCount;
  billable: boolean;
  counter: UsageCounter;
}

const classes: Record<CallCount, CallClass> = {
  SERVED: { count: "SERVED", billable: true, counter: "requests" },
  SUBSCRIPTION_EVENT: { count: "SUBSCRIPTION_EVENT", billable: true, counter: "requests" },
  REFUSED: { count: "REFUSED", billable: false, counter: "refused" },
  UPSTREAM_ERROR: { count: "UPSTREAM_ERROR", billable: false, counter: "refused" },
  MALFORMED: { count: "MALFORMED", billable: false, counter: "malformed" },
  UNKNOWN_METHOD: { count: "UNKNOWN_METHOD", billable: false, counter: "unknownMethod" },
};

/** The proxy's own answers to a body that is not JSON-RPC (jsonrpc.ts and the body limit). */
const MALFORMED_REFUSALS = new Set(["PARSE_ERROR", "INVALID_REQUEST", "TOO_LARGE", "BATCH_TOO_LARGE"]);

/** JSON-RPC 2.0's codes for a body or call that is not JSON-RPC: parse error, invalid request. */
const MALFORMED_CODES = new Set([-32700, -32600]);
/** JSON-RPC 2.0's "method not found": the node does not serve the method. */
export const METHOD_NOT_FOUND_CODE = -32601;

/** The name a delivered subscription notification is counted under. */
export const SUBSCRIPTION_METHOD = "eth_subscription";

/** How one call ended, as the meter saw it. */
export interface CallOutcome {
  /** The proxy's refusal of this call, or of the whole request it came in. */
  refusal?: Refusal | null;
  /** The HTTP status of the node's answer, when the call was forwarded. */
  upstreamStatus?: number;
  /** The JSON-RPC error code the node answered this call with, when it answered one. */
  nodeErrorCode?: number | null;
  /** A notification the node pushed and the proxy delivered (no call of the client's). */
  pushed?: boolean;
}

/** Classifies one call: billable or not, and why. */
export function classifyCall(outcome: CallOutcome): CallClass {
  if (outcome.pushed) return classes.SUBSCRIPTION_EVENT;
  const refusal = outcome.refusal;
  if (refusal) return MALFORMED_REFUSALS.has(refusal.kind) ? classes.MALFORMED : classes.REFUSED;
  if (outcome.upstreamStatus !== undefined && outcome.upstreamStatus >= 400) return classes.UPSTREAM_ERROR;
  const code = outcome.nodeErrorCode;
  if (code === METHOD_NOT_FOUND_CODE) return classes.UNKNOWN_METHOD;
  if (code !== undefined && code !== null && MALFORMED_CODES.has(code)) return classes.MALFORMED;
  return classes.SERVED;
}
