import { checkCall } from "./checks.ts";
import type { CompiledEndpoint } from "./endpoint.ts";
import { errorObject, isCall, type Refusal, refusal } from "./jsonrpc.ts";
import { NONE_REFUSED, type Refused, type RequestRecord } from "./request-record.ts";
import type { RateDecision, RateLimitStage } from "./stages.ts";

/**
 * Admit, refuse, meter: the sequence an HTTP request and a WebSocket message both go through once parsed,
 * written once here. What differs between the two is only how an answer is written (a status line and
 * headers, or a frame), which stays in plane.ts.
 */

/** What the proxy lets through of a parsed request. */
export interface Admission {
  /** A refusal of the whole request (the rate-limit stage refused every call). */
  whole: Refusal | null;
  /** Each call's refusal, in the calls' order; undefined where it passes. */
  perCall: (Refusal | undefined)[];
  /** The refused calls by index; NONE_REFUSED when none. */
  refused: Refused;
}

/**
 * Admits a parsed request's calls: each call's own checks (disabled and filtered methods, the node's
 * controls, the chain: checks.ts), then the rate-limit stage, which sees the request's methods. Records
 * the calls on the request. Synchronous unless a check (the transaction parser loading) or the stage
 * (Redis) is not, so the usual request takes no promise.
 */
export function admitCalls(
  endpoint: CompiledEndpoint,
  request: RequestRecord,
  calls: unknown[],
  rateLimit: RateLimitStage,
): Admission | Promise<Admission> {
  const methods = new Array<string>(calls.length);
  const perCall = new Array<Refusal | undefined>(calls.length);
  let waiting: Promise<void>[] | null = null;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    const ok = isCall(c);
    methods[i] = ok ? c.method : "";
    const r = ok ? checkCall(endpoint, c) : refusal("INVALID_REQUEST");
    if (r instanceof Promise) {
      waiting ??= [];
      waiting.push(
        r.then((checked) => {
          perCall[i] = checked;
        }),
      );
    } else perCall[i] = r;
  }
  request.parsed(calls, methods);
  if (waiting) return Promise.all(waiting).then(() => rateLimited(request, perCall, rateLimit));
  return rateLimited(request, perCall, rateLimit);
}

function rateLimited(
  request: RequestRecord,
  perCall: (Refusal | undefined)[],
  rateLimit: RateLimitStage,
): Admission | Promise<Admission> {
  const decision = rateLimit.admit(request);
  return decision instanceof Promise
    ? decision.then((decided) => admission(decided, perCall))
    : admission(decision, perCall);
}

function admission(decision: RateDecision | undefined, perCall: (Refusal | undefined)[]): Admission {
  if (decision && "refuse" in decision) return { whole: decision.refuse, perCall, refused: NONE_REFUSED };
  if (decision)
    decision.perCall.forEach((r, i) => {
      if (r && !perCall[i]) perCall[i] = r;
    });
  return { whole: null, perCall, refused: refusedOf(perCall) };
}

export function refusedOf(perCall: (Refusal | undefined)[]): Refused {
  let refused: Refused | null = null;
  for (let index = 0; index < perCall.length; index++) {
    const r = perCall[index];
    if (!r) continue;
    refused ??= [];
    refused.push({ index, refusal: r });
  }
  return refused ?? NONE_REFUSED;
}

/** The proxy's answer to calls it refused itself: one error object per call (an array for a batch). */
export function refusedCallsAnswer(calls: unknown[], batch: boolean, refusalOf: (index: number) => Refusal): string {
  const parts = calls.map((c, i) => errorObject(isCall(c) ? c.id : null, refusalOf(i)));
  return batch ? `[${parts.join(",")}]` : parts[0];
}

/**
 * The headers a refusal adds to an HTTP answer (a refused request or WebSocket upgrade): a rate limit's
 * 429 says when the limiter frees, in whole seconds (RFC 9110 Retry-After).
 */
export function refusalHeaders(r: Refusal): Record<string, string> | null {
  return r.retryAfterMs === undefined ? null : { "retry-after": String(retryAfterSeconds(r.retryAfterMs)) };
}

/** Whole seconds until a limiter frees, at least one (a client retrying at once would be refused again). */
export const retryAfterSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** The refusal saying when to come back: Retry-After on HTTP (refusalHeaders), `data.retryAfter` (s) and `retryAfterMs` in the error. */
function comeBackIn(r: Refusal, ms: number, message = r.message): Refusal {
  const retryAfterMs = Math.max(0, Math.round(ms));
  return { ...r, message, data: { retryAfter: retryAfterSeconds(retryAfterMs), retryAfterMs }, retryAfterMs };
}

/**
 * When an account's plan allowance ends (ms since the epoch: its billing period's end, as the meter read
 * it), or undefined while it is not known (the meter reads it for the next answer).
 */
export type AllowanceEnd = (accountId: string) => number | undefined;

/**
 * How long a client refused for its account's WebSocket connections is told to wait: a connection frees
 * when one of the account's closes, which the proxy cannot foresee, so this is a back-off, not a promise
 * (docs/decisions/0710-retry-after-for-allowances-and-websockets.md).
 */
export const WEBSOCKETS_RETRY_AFTER_MS = 10_000;

/** The refusal of a WebSocket upgrade past the account's open connections. */
export const tooManyWebSockets = (): Refusal => comeBackIn(refusal("TOO_MANY_WEBSOCKETS"), WEBSOCKETS_RETRY_AFTER_MS);

const statusKinds = {
  PAUSED: true,
  ARCHIVED: true,
  DISABLED: true,
  SUSPENDED: true,
  LIMIT_REACHED: true,
  CANCELED: true,
  TERMINATED: true,
} as const;

/**
 * The refusal of an endpoint that is not ACTIVE (an unknown status is DISABLED); undefined when it serves.
 * LIMIT_REACHED says when the plan's allowance comes back (the billing period's end) when `allowanceEnd`
 * knows it.
 */
export function statusRefusal(
  endpoint: CompiledEndpoint,
  allowanceEnd?: AllowanceEnd,
  now = Date.now(),
): Refusal | undefined {
  const status = endpoint.record.status;
  if (status === "ACTIVE") return undefined;
  const r = refusal(status in statusKinds ? (status as keyof typeof statusKinds) : "DISABLED");
  if (status !== "LIMIT_REACHED") return r;
  const end = allowanceEnd?.(endpoint.record.accountId);
  if (end === undefined || end <= now) return r;
  return comeBackIn(
    r,
    end - now,
    `${r.message} It serves again when the billing period ends, in ${retryAfterSeconds(end - now)} s.`,
  );
}
