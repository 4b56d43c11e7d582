import type { CompiledEndpoint } from "./endpoint.ts";
import type { Refusal } from "./jsonrpc.ts";
import type { MeterEvent } from "./stages.ts";

export type Refused = MeterEvent["refused"];
export const NONE_REFUSED: Refused = [];

/** Who sent a request, known once its endpoint is resolved. */
export interface RequestOrigin {
  endpoint: CompiledEndpoint;
  transport: "http" | "ws";
  clientIp: string;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** The id sent to the client as x-request-id; the meter makes one when absent. */
  requestId?: string;
  /** POST, GET (a WebSocket upgrade), OPTIONS …; WS for a WebSocket message. */
  httpMethod?: string;
  /** The URL as logged (see MeterEvent.url); left out when no meter is attached. */
  url?: string;
  /** See MeterEvent.origin; left out when no meter is attached. */
  origin?: string;
}

/**
 * One request (an HTTP request, a WebSocket upgrade or message) as it goes through the proxy's stages:
 * who sent it, then what it asks (its body, calls and methods, as they are read and parsed), then how it
 * was answered. The rate-limit stage sees it (as a ProxyRequestInfo) and the meter records it once
 * answered (as its MeterEvent): one object from arrival to metering, no copies between stages.
 */
export class RequestRecord implements MeterEvent {
  readonly endpoint: CompiledEndpoint;
  readonly transport: "http" | "ws";
  readonly clientIp: string;
  readonly startedAt: number;
  requestId: string | undefined;
  readonly httpMethod: string | undefined;
  readonly url: string | undefined;
  readonly origin: string | undefined;
  /** See MeterEvent.untimed. */
  untimed = false;
  /** See MeterEvent.pushed. */
  pushed = false;
  /** The method of each call, in order (see ProxyRequestInfo.methods). */
  methods: string[] = [];
  /** The parsed calls; undefined until the body parses. */
  calls: unknown[] | undefined = undefined;
  requestBody: Buffer | string | null = null;
  /** Calls the proxy refused itself (see MeterEvent.refused). */
  refused: Refused = NONE_REFUSED;
  requestRefusal: Refusal | null = null;
  httpStatus = 0;
  responseBytes: number | null = null;
  responseBody: Buffer | string | null = null;
  durationMs = 0;

  constructor(origin: RequestOrigin) {
    this.endpoint = origin.endpoint;
    this.transport = origin.transport;
    this.clientIp = origin.clientIp;
    this.startedAt = origin.startedAt;
    this.requestId = origin.requestId;
    this.httpMethod = origin.httpMethod;
    this.url = origin.url;
    this.origin = origin.origin;
  }

  /** The request was parsed into these calls. */
  parsed(calls: unknown[], methods: string[]): this {
    this.calls = calls;
    this.methods = methods;
    return this;
  }

  /**
   * The proxy refused the whole request with `r`, answering `sent`. `responseBytes` is null for an
   * HTTP refusal (no answer was forwarded); a WebSocket refusal counts the bytes it sent.
   */
  refusedWhole(r: Refusal, sent: string, responseBytes: number | null = null): this {
    this.requestRefusal = r;
    this.httpStatus = r.http;
    this.responseBody = sent;
    this.responseBytes = responseBytes;
    return this;
  }

  /** The request was answered with this status and body (the node's, or the proxy's for refused calls). */
  answered(httpStatus: number, responseBytes: number | null, responseBody: Buffer | string | null): this {
    this.httpStatus = httpStatus;
    this.responseBytes = responseBytes;
    this.responseBody = responseBody;
    return this;
  }

  /** Ends the record: its duration runs from its arrival to now. */
  end(now = performance.now()): this {
    this.durationMs = now - this.startedAt;
    return this;
  }
}
