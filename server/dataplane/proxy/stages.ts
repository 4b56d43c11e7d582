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
  /** The upstream's answer (the body as sent to the client) when one was forwarded; null for WebSocket frames. */
  responseBytes: number | null;
  /** Calls the proxy refused itself, by index into `methods`. */
  refused: { index: number; refusal: Refusal }[];
  /** A refusal of the whole request (status, security, no upstream). */
  requestRefusal: Refusal | null;
}

export interface MeterStage {
  record(event: MeterEvent): void;
}

/** No rate limiter is configured: every call is admitted. */
export const noRateLimit: RateLimitStage = { admit: () => undefined };

/** No meter is attached: nothing is recorded. */
export const noMeter: MeterStage = { record: () => {} };
