import type { CompiledEndpoint } from "./endpoint.ts";
import type { Refusal } from "./jsonrpc.ts";

/** What the rate-limit and metering stages see of a request. */
export interface ProxyRequestInfo {
  endpoint: CompiledEndpoint;
  transport: "http" | "ws";
  clientIp: string;
  /** The method of each call, in order (one for a single call, several for a batch). */
  methods: string[];
}

/**
 * The rate-limit stage, run after security and before forwarding.
 * Returns undefined to let everything through, a refusal for the whole request, or per-call refusals
 * (same order as `methods`; undefined entries pass).
 */
export interface RateLimitStage {
  admit(request: ProxyRequestInfo): undefined | RateDecision | Promise<undefined | RateDecision>;
}

export type RateDecision = { refuse: Refusal } | { perCall: (Refusal | undefined)[] };

/** One finished request, for metering, usage and error logs. */
export interface MeterEvent extends ProxyRequestInfo {
  startedAt: number;
  durationMs: number;
  httpStatus: number;
  /** Bytes of the answer sent to the client (HTTP: when one was forwarded; WebSocket: the upstream's reply
   * to this message, or the proxy's own refusal); null when there was none. */
  responseBytes: number | null;
  /** Calls the proxy refused itself, by index into `methods`. */
  refused: { index: number; refusal: Refusal }[];
  /** A refusal of the whole request (status, security, no upstream). */
  requestRefusal: Refusal | null;
  // The details below are filled only when a meter is attached; bodies are references to the buffers the
  // proxy already holds (the meter copies at most what it keeps, and only for failed calls).
  /** POST, GET (a refused WebSocket upgrade), OPTIONS …; WS for WebSocket messages. */
  httpMethod?: string;
  /** The request's path (or domain-mask host and path) as received; path tokens are masked before storing. */
  url?: string;
  /** The parsed calls, in the order of `methods` (their params decide archive calls); absent when unparsed. */
  calls?: unknown[];
  /** The request body as received (a WebSocket message for WS). */
  requestBody?: Buffer | string | null;
  /** The body sent to the client: the upstream's answer or the proxy's own refusal. */
  responseBody?: Buffer | string | null;
  /** The id sent to the client as x-request-id (per message for WebSocket); the meter generates one when absent. */
  requestId?: string;
  /** The request's Origin header, or its Referer when it has no Origin (as received; the meter shortens it). */
  origin?: string;
  /** True when `durationMs` is no answer time: a subscription notification, a WebSocket message metered without its reply. */
  untimed?: boolean;
  /** True for a notification the node pushed (eth_subscription) that was delivered to the client. */
  pushed?: boolean;
}

export interface MeterStage {
  record(event: MeterEvent): void;
  /** When the account's plan allowance ends (ms since the epoch), for a LIMIT_REACHED answer's Retry-After (see AllowanceEnd). */
  allowanceEndOf?(accountId: string): number | undefined;
}

/** No rate limiter is configured: every call is admitted. */
export const noRateLimit: RateLimitStage = { admit: () => undefined };

/** No meter is attached: nothing is recorded. */
export const noMeter: MeterStage = { record: () => {} };
