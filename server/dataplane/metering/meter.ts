import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { isUuid } from "../../platform/ids.ts";
import { LatencySketch, type StoredSketch } from "../latency-sketch.ts";
import type { Refusal } from "../proxy/jsonrpc.ts";
import type { MeterEvent, MeterStage } from "../proxy/stages.ts";
import { type CallClass, classifyCall } from "./counting-rule.ts";

/** The proxy's MeterEvent carries the request and response details error logs and archive detection use. */
export type DetailedMeterEvent = MeterEvent;

/** One endpoint's calls of one method in one minute, added to what is stored. */
export interface UsageMinute {
  accountId: string;
  endpointId: string;
  method: string;
  minute: Date;
  requests: number;
  credits: number;
  archiveRequests: number;
  /** Calls the proxy refused, or the node answered with an HTTP error (see counting-rule.ts). */
  refused: number;
  /** Calls that were not JSON-RPC. */
  malformed: number;
  /** Calls the node answered "method not found". */
  unknownMethod: number;
}

/**
 * One endpoint's requests in one minute, added to what is stored: by HTTP status, refused calls by
 * refusal kind, and answer times as a sketch (../latency-sketch.ts).
 */
export interface EndpointMinute {
  accountId: string;
  endpointId: string;
  minute: Date;
  /** HTTP requests and WebSocket messages (a batch is one), whatever their answer. */
  requests: number;
  statuses: Record<string, number>;
  refusals: Record<string, number>;
  latencySketch: StoredSketch;
}

/** A failed call as the error logs keep it (URL masked, bodies capped). */
export interface FailedCall {
  accountId: string;
  endpointId: string;
  requestId: string;
  at: Date;
  method: string;
  httpMethod: string;
  status: number;
  errorCode: number | null;
  errorKind: string;
  message: string;
  url: string;
  network: string;
  transport: string;
  requestBody: string | null;
  responseBody: string | null;
  /** How many calls the request held (1 for a single call). */
  calls: number;
  /** How many of them failed: a request's failed calls are kept as one row, described by its first failure. */
  failedCalls: number;
  clientIp: string | null;
  /** Scheme, host and port of the request's Origin (or Referer); null when it sent neither. */
  origin: string | null;
}

/** An account's usage in its current period against its plan's responses per month. */
export interface MonthlyLimit {
  total: number;
  limit: number;
  end: Date;
  reached: boolean;
}

/**
 * Where the meter writes, and the account rules it applies after writing: the port the usage and
 * error-log domains fill (server/domains/usage/meter-sink.ts).
 */
export interface MeterSink {
  addUsage(rows: UsageMinute[]): Promise<void>;
  addEndpointMinutes(rows: EndpointMinute[]): Promise<void>;
  addFailedCalls(rows: FailedCall[]): Promise<void>;
  /** Compares the account's period total with its plan, moving its endpoints to LIMIT_REACHED and back. */
  enforceMonthlyLimit(accountId: string): Promise<MonthlyLimit>;
  /** Accounts whose endpoints are LIMIT_REACHED (re-checked by housekeeping: a new period or a higher limit). */
  accountsAtLimit(): Promise<string[]>;
  /** Deletes failed calls older than `retentionDays` (undefined: the error logs' default). */
  pruneFailedCalls(retentionDays: number | undefined): Promise<void>;
  /** Deletes endpoint metric minutes older than the longest range the metrics show. */
  pruneEndpointMinutes(): Promise<void>;
}

/** What a call costs in credits, and whether it is an archive call (the usage domain's credit table). */
export interface CallPricing {
  cost(
    network: string,
    method: string,
    params: unknown,
    head: number | undefined,
  ): { credits: number; archive: boolean };
}

/** Bodies kept per failed call: enough to see the call and the error, bounded so a large batch cannot bloat memory or the table. */
export const BODY_LIMIT = 16 * 1024;

/**
 * An Origin or Referer as stored: a URL cut to its scheme, host and port (a Referer's path and query may
 * carry tokens), anything else (`null`, a bare host) as sent, at most 255 characters.
 */
export function loggedOrigin(header: string | undefined): string | null {
  if (!header) return null;
  try {
    const url = new URL(header);
    if (url.protocol === "http:" || url.protocol === "https:") return url.origin.slice(0, 255);
  } catch {
    // Not a URL: kept as sent.
  }
  return header.slice(0, 255);
}

/** Tokens in endpoint URLs (/rpc/<exId>/<token>) become ****; query strings are dropped. */
export function maskUrl(url: string): string {
  const path = url.split(/[?#]/)[0];
  return path.replace(/^(\/rpc\/[^/]+)\/[^/]+/, "$1/****");
}

/** A body as stored: text, cut to BODY_LIMIT bytes with a note saying so. */
export function capBody(body: Buffer | string | null | undefined): string | null {
  if (body === null || body === undefined) return null;
  const buffer = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  if (buffer.length <= BODY_LIMIT) return buffer.toString("utf8");
  return `${buffer.subarray(0, BODY_LIMIT).toString("utf8")}… [${buffer.length - BODY_LIMIT} more bytes not kept]`;
}

export interface MeterOptions {
  sink: MeterSink;
  pricing: CallPricing;
  log?: Logger;
  /** Flush at least this often (ms). */
  flushMs?: number;
  /** Flush early when this many usage rows or error logs are pending. */
  flushRows?: number;
  /** Error logs older than this are deleted (days). */
  retentionDays?: number;
  /** How often old error logs and endpoint metrics are pruned and LIMIT_REACHED endpoints re-checked (ms). */
  housekeepingMs?: number;
  /** How often an account's period total is re-read, to include other processes' usage (ms). */
  totalsRefreshMs?: number;
  /** The chain head per network, for archive detection; archive calls need it (see method-credits.json). */
  headOf?: (network: string) => number | undefined;
  /** Error-log rows one endpoint may add per minute in this process; DEFAULT_LOGS_PER_ENDPOINT_MINUTE when absent. */
  logsPerEndpointMinute?: number;
}

/**
 * Anyone who knows an endpoint's address can send it requests that fail (without its token, say), each
 * an error-log row with up to two 16 KiB bodies: past this many rows in a minute an endpoint's failures
 * are counted in its metrics but not logged, so a flood cannot fill the database.
 */
export const DEFAULT_LOGS_PER_ENDPOINT_MINUTE = 600;

interface UsageCell {
  accountId: string;
  endpointId: string;
  method: string;
  minute: number;
  requests: number;
  credits: number;
  archiveRequests: number;
  refused: number;
  malformed: number;
  unknownMethod: number;
}

/** An endpoint's requests in the minute being counted (see EndpointMinute). */
interface RequestCell {
  accountId: string;
  endpointId: string;
  minute: number;
  requests: number;
  statuses: Map<number, number>;
  refusals: Map<string, number>;
  latency: LatencySketch;
}

interface PeriodTotal {
  total: number;
  limit: number;
  end: number;
  reached: boolean;
  loadedAt: number;
}

/** The failed calls of one request, tallied for its one error-log row. */
class FailedCalls {
  first: { method: string; refusal: Refusal; index: number } | null = null;
  count = 0;
  private readonly byKind = new Map<string, number>();

  add(method: string, refusal: Refusal, index: number, calls = 1): void {
    if (!this.first || index < this.first.index) this.first = { method, refusal, index };
    this.count += calls;
    this.byKind.set(refusal.kind, (this.byKind.get(refusal.kind) ?? 0) + calls);
  }

  /** The first failure's message; past one failure in a batch, how many failed and of which kinds. */
  describe(calls: number): string {
    const message = this.first?.refusal.message ?? "";
    if (this.count <= 1 || this.byKind.size === 0 || calls <= 1) return message;
    const kinds = [...this.byKind].map(([kind, n]) => `${kind} ${n}`).join(", ");
    return `${message} (${this.count} of ${calls} calls failed: ${kinds})`;
  }
}

/** One row per endpoint and minute (one upsert cannot touch a row twice): cells kept back from a failed flush, or from a clock that stepped back, are added together. */
function endpointMinutesOf(cells: RequestCell[]): EndpointMinute[] {
  const rows = new Map<string, EndpointMinute>();
  for (const cell of cells) {
    const key = `${cell.endpointId}|${cell.minute}`;
    const row = rows.get(key);
    if (!row) {
      rows.set(key, {
        accountId: cell.accountId,
        endpointId: cell.endpointId,
        minute: new Date(cell.minute),
        requests: cell.requests,
        statuses: Object.fromEntries(cell.statuses),
        refusals: Object.fromEntries(cell.refusals),
        latencySketch: cell.latency.toStored(),
      });
      continue;
    }
    row.requests += cell.requests;
    for (const [status, n] of cell.statuses) row.statuses[status] = (row.statuses[status] ?? 0) + n;
    for (const [kind, n] of cell.refusals) row.refusals[kind] = (row.refusals[kind] ?? 0) + n;
    row.latencySketch = LatencySketch.of(row.latencySketch).merge(cell.latency).toStored();
  }
  return [...rows.values()];
}

interface NodeError {
  method: string;
  code: number;
  refusal: Refusal;
}

/**
 * The JSON-RPC errors in the node's answer, by index of the call they answer (matched by id, else by
 * position); calls the proxy refused itself are left out. Null when the answer holds none: a byte search
 * comes first, since most answers have none.
 */
function nodeErrorsOf(event: DetailedMeterEvent): Map<number, NodeError> | null {
  const body = event.responseBody as Buffer | string;
  const hasError = typeof body === "string" ? body.includes('"error"') : body.includes('"error"');
  if (!hasError) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === "string" ? body : body.toString("utf8"));
  } catch {
    return null;
  }
  const found = new Map<number, NodeError>();
  const answers = Array.isArray(parsed) ? parsed : [parsed];
  const refusedIndexes = new Set(event.refused.map((r) => r.index));
  const methodOfId = new Map<string, { method: string; index: number }>();
  (event.calls ?? []).forEach((c, index) => {
    const call = c as { id?: unknown; method?: string };
    if (call && call.id !== undefined)
      methodOfId.set(JSON.stringify(call.id), { method: String(call.method ?? ""), index });
  });
  answers.forEach((a, position) => {
    if (!a || typeof a !== "object" || !("error" in a)) return;
    const answer = a as { id?: unknown; error?: { code?: unknown; message?: unknown } };
    const named = methodOfId.get(JSON.stringify(answer.id ?? null));
    const index = named?.index ?? position;
    if (refusedIndexes.has(index)) return;
    const code = typeof answer.error?.code === "number" ? answer.error.code : 0;
    found.set(index, {
      method: named?.method ?? event.methods[index] ?? "",
      code,
      refusal: {
        kind: "JSON_RPC_ERROR",
        http: 200,
        code,
        message: typeof answer.error?.message === "string" ? answer.error.message : "JSON-RPC error",
      },
    });
  });
  return found.size > 0 ? found : null;
}

/** Error logs waiting beyond this are dropped (and counted), so a database outage cannot exhaust memory. */
const MAX_PENDING_LOGS = 20_000;
const MAX_PENDING_CELLS = 200_000;
const NO_METHOD = "(none)";

/**
 * The proxy's meter: counts every call in memory per account, endpoint, method and minute, prices it,
 * and writes the counts with one multi-row upsert per flush (every second or `flushRows` rows) so the
 * proxy never waits for the database. Failed calls are queued as error logs and written the same way.
 * After each flush it compares each touched account's period total with its plan's responses per
 * month and moves its endpoints to LIMIT_REACHED (and back when the period rolls over or the limit rises).
 */
export class UsageMeter implements MeterStage {
  private cells = new Map<string, UsageCell>();
  /** This minute's request cell per endpoint; one from an earlier minute moves to `closedRequestCells`. */
  private requestCells = new Map<string, RequestCell>();
  private closedRequestCells: RequestCell[] = [];
  private logs: FailedCall[] = [];
  private totals = new Map<string, PeriodTotal>();
  /** Accounts whose period total is being read for allowanceEndOf. */
  private readonly reading = new Set<string>();
  private touched = new Map<string, number>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private housekeeping: NodeJS.Timeout | null = null;
  private readonly requestPrefix = randomBytes(4).toString("hex");
  private requestCounter = 0;
  /** Error logs dropped because too many were waiting, or past their endpoint's rows for the minute. */
  droppedLogs = 0;
  /** Per endpoint, the minute its error-log rows are counted in and how many it has added. */
  private logsThisMinute = new Map<string, { minute: number; rows: number }>();

  constructor(private readonly options: MeterOptions) {}

  start(): this {
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? 1000);
    this.timer.unref();
    this.housekeeping = setInterval(() => void this.housekeep(), this.options.housekeepingMs ?? 60_000);
    this.housekeeping.unref();
    return this;
  }

  record(event: DetailedMeterEvent): void {
    const record = event.endpoint.record;
    // Only endpoints the service knows (ids are UUIDs) are metered.
    if (!isUuid(record.id) || !isUuid(record.accountId)) return;
    const now = Date.now();
    const minute = now - (now % 60_000);
    const methods = event.methods;
    const requests = this.requestCellOf(record.accountId, record.id, minute);
    requests.requests++;
    requests.statuses.set(event.httpStatus, (requests.statuses.get(event.httpStatus) ?? 0) + 1);
    if (!event.untimed) requests.latency.accept(event.durationMs);
    if (event.requestRefusal) {
      const kind = event.requestRefusal.kind;
      const counted = classifyCall({ refusal: event.requestRefusal });
      requests.refusals.set(kind, (requests.refusals.get(kind) ?? 0) + Math.max(methods.length, 1));
      if (methods.length === 0) this.countUnbilled(record.accountId, record.id, NO_METHOD, minute, counted);
      for (const m of methods) this.countUnbilled(record.accountId, record.id, m || NO_METHOD, minute, counted);
      const failures = new FailedCalls();
      failures.add(methods[0] ?? "", event.requestRefusal, 0, Math.max(methods.length, 1));
      this.logFailures(event, now, failures, false);
      return;
    }
    let refusedAt: Map<number, Refusal> | null = null;
    if (event.refused.length > 0) {
      refusedAt = new Map();
      for (const r of event.refused) refusedAt.set(r.index, r.refusal);
    }
    const head = event.calls && this.options.headOf ? this.options.headOf(record.network) : undefined;
    const httpFailed = event.httpStatus >= 400;
    // The node's JSON-RPC errors, by call (a cheap byte search first: most answers have none).
    const nodeErrors = !httpFailed && event.responseBody ? nodeErrorsOf(event) : null;
    // Made at the first failure: most requests have none.
    let failures: FailedCalls | null = null;
    for (let i = 0; i < methods.length; i++) {
      const method = methods[i] || NO_METHOD;
      const refusal = refusedAt?.get(i);
      if (refusal) {
        this.countUnbilled(record.accountId, record.id, method, minute, classifyCall({ refusal }));
        requests.refusals.set(refusal.kind, (requests.refusals.get(refusal.kind) ?? 0) + 1);
        failures ??= new FailedCalls();
        failures.add(methods[i], refusal, i);
        continue;
      }
      const nodeError = nodeErrors?.get(i);
      const counted = classifyCall({
        upstreamStatus: event.httpStatus,
        nodeErrorCode: nodeError?.code,
        pushed: event.pushed,
      });
      if (nodeError) {
        failures ??= new FailedCalls();
        failures.add(nodeError.method, nodeError.refusal, i);
      }
      if (!counted.billable) {
        this.countUnbilled(record.accountId, record.id, method, minute, counted);
        if (counted.count === "UPSTREAM_ERROR") {
          failures ??= new FailedCalls();
          failures.add(
            methods[i],
            {
              kind: "UPSTREAM_HTTP_ERROR",
              http: event.httpStatus,
              code: 0,
              message: `The upstream answered HTTP ${event.httpStatus}.`,
            },
            i,
          );
        }
        continue;
      }
      const params = event.calls ? (event.calls[i] as { params?: unknown } | undefined)?.params : undefined;
      const cost = this.options.pricing.cost(record.network, method, params, head);
      this.countBilled(record.accountId, record.id, method, minute, cost.credits, cost.archive);
    }
    if (failures) this.logFailures(event, now, failures, methods.length > 1);
    const flushRows = this.options.flushRows ?? 5000;
    if (this.cells.size >= flushRows || this.logs.length >= flushRows || this.closedRequestCells.length >= flushRows) {
      void this.flush();
    }
  }

  private requestCellOf(accountId: string, endpointId: string, minute: number): RequestCell {
    const cell = this.requestCells.get(endpointId);
    if (cell && cell.minute === minute) return cell;
    if (cell && this.closedRequestCells.length < MAX_PENDING_CELLS) this.closedRequestCells.push(cell);
    const next: RequestCell = {
      accountId,
      endpointId,
      minute,
      requests: 0,
      statuses: new Map(),
      refusals: new Map(),
      latency: new LatencySketch(),
    };
    this.requestCells.set(endpointId, next);
    return next;
  }

  private cellOf(accountId: string, endpointId: string, method: string, minute: number): UsageCell | undefined {
    const key = `${endpointId}|${minute}|${method}`;
    let cell = this.cells.get(key);
    if (!cell) {
      if (this.cells.size >= MAX_PENDING_CELLS) return undefined;
      cell = {
        accountId,
        endpointId,
        method: method.slice(0, 200),
        minute,
        requests: 0,
        credits: 0,
        archiveRequests: 0,
        refused: 0,
        malformed: 0,
        unknownMethod: 0,
      };
      this.cells.set(key, cell);
    }
    return cell;
  }

  /** A billable call: counted in `requests` with its credits. */
  private countBilled(
    accountId: string,
    endpointId: string,
    method: string,
    minute: number,
    credits: number,
    archive: boolean,
  ) {
    const cell = this.cellOf(accountId, endpointId, method, minute);
    if (!cell) return;
    cell.requests++;
    cell.credits += credits;
    if (archive) cell.archiveRequests++;
    if (credits > 0) this.touched.set(accountId, (this.touched.get(accountId) ?? 0) + credits);
  }

  /** A call that is not billed: counted apart, in the counter the counting rule names for it. */
  private countUnbilled(accountId: string, endpointId: string, method: string, minute: number, counted: CallClass) {
    const cell = this.cellOf(accountId, endpointId, method, minute);
    if (cell) cell[counted.counter]++;
  }

  private requestIdOf(event: DetailedMeterEvent): string {
    if (event.requestId) return event.requestId;
    const id = `${this.requestPrefix}-${(++this.requestCounter).toString(36)}`;
    event.requestId = id;
    return id;
  }

  /** Whether the endpoint may add another error-log row in the minute of `at` (DEFAULT_LOGS_PER_ENDPOINT_MINUTE). */
  private takeLogRow(endpointId: string, at: number): boolean {
    const minute = at - (at % 60_000);
    let counted = this.logsThisMinute.get(endpointId);
    if (!counted || counted.minute !== minute) {
      // Endpoints of earlier minutes are forgotten now and then, so the map holds about one minute's.
      if (!counted && this.logsThisMinute.size >= MAX_PENDING_LOGS) this.logsThisMinute.clear();
      counted = { minute, rows: 0 };
      this.logsThisMinute.set(endpointId, counted);
    }
    if (counted.rows >= (this.options.logsPerEndpointMinute ?? DEFAULT_LOGS_PER_ENDPOINT_MINUTE)) return false;
    counted.rows++;
    return true;
  }

  /**
   * One error-log row per request however many of its calls failed: the first failure's method, status
   * and error, with the counts (and, past one failure, a count per kind in the message). A batch's row is
   * stored under `<x-request-id>.<index of that first failure>`; bodies are capped once, for the row.
   */
  private logFailures(event: DetailedMeterEvent, at: number, failures: FailedCalls, batch: boolean) {
    const first = failures.first;
    if (!first) return;
    const record = event.endpoint.record;
    if (this.logs.length >= MAX_PENDING_LOGS || !this.takeLogRow(record.id, at)) {
      this.droppedLogs++;
      return;
    }
    const requestId = this.requestIdOf(event);
    const calls = Math.max(event.methods.length, 1);
    const refusal = first.refusal;
    this.logs.push({
      accountId: record.accountId,
      endpointId: record.id,
      requestId: batch ? `${requestId}.${first.index}` : requestId,
      at: new Date(at),
      method: (first.method || NO_METHOD).slice(0, 200),
      httpMethod: event.httpMethod ?? (event.transport === "ws" ? "WS" : "POST"),
      status: refusal.http === 200 ? event.httpStatus : refusal.http,
      errorCode: refusal.code || null,
      errorKind: refusal.kind,
      message: (event.requestRefusal ? refusal.message : failures.describe(calls)).slice(0, 1000),
      url: maskUrl(event.url ?? `/rpc/${record.exId}`),
      network: record.network,
      transport: event.transport,
      requestBody: capBody(event.requestBody),
      responseBody: capBody(event.responseBody),
      calls,
      failedCalls: Math.min(failures.count, calls),
      clientIp: event.clientIp || null,
      origin: loggedOrigin(event.origin),
    });
  }

  /** Writes what is pending; one flush at a time, the next waits for it. */
  flush(): Promise<void> {
    if (this.flushing)
      return this.flushing.then(() =>
        this.cells.size || this.logs.length || this.requestCells.size ? this.flush() : undefined,
      );
    if (this.cells.size === 0 && this.logs.length === 0 && this.requestCells.size === 0) return Promise.resolve();
    const cells = this.cells;
    const logs = this.logs;
    const touched = this.touched;
    const requestCells = [...this.closedRequestCells, ...this.requestCells.values()];
    this.cells = new Map();
    this.logs = [];
    this.touched = new Map();
    this.requestCells = new Map();
    this.closedRequestCells = [];
    this.flushing = this.write(cells, logs, touched, requestCells).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async write(
    cells: Map<string, UsageCell>,
    logs: FailedCall[],
    touched: Map<string, number>,
    requestCells: RequestCell[],
  ) {
    const { sink, log } = this.options;
    const rows = [...cells.values()].map((c) => ({ ...c, minute: new Date(c.minute) }));
    try {
      // Chunks keep each statement under PostgreSQL's 65535 parameters.
      for (let i = 0; i < rows.length; i += 4000) await sink.addUsage(rows.slice(i, i + 4000));
    } catch (error) {
      log?.error({ err: error, rows: rows.length }, "metering: writing usage failed; kept for the next flush");
      for (const [key, cell] of cells) {
        const now = this.cells.get(key);
        if (!now) this.cells.set(key, cell);
        else {
          now.requests += cell.requests;
          now.credits += cell.credits;
          now.archiveRequests += cell.archiveRequests;
          now.refused += cell.refused;
          now.malformed += cell.malformed;
          now.unknownMethod += cell.unknownMethod;
        }
      }
      for (const [a, c] of touched) this.touched.set(a, (this.touched.get(a) ?? 0) + c);
      this.closedRequestCells.push(...requestCells);
      return;
    }
    try {
      const minutes = endpointMinutesOf(requestCells);
      for (let i = 0; i < minutes.length; i += 4000) await sink.addEndpointMinutes(minutes.slice(i, i + 4000));
    } catch (error) {
      // Usage (billing) is kept for the next flush; these are metrics, dropped rather than held twice.
      log?.error({ err: error, rows: requestCells.length }, "metering: writing endpoint metrics failed; dropped");
    }
    try {
      for (let i = 0; i < logs.length; i += 1000) await sink.addFailedCalls(logs.slice(i, i + 1000));
    } catch (error) {
      log?.error({ err: error, logs: logs.length }, "metering: writing error logs failed; dropped");
      this.droppedLogs += logs.length;
    }
    for (const [accountId, credits] of touched) {
      await this.checkLimit(accountId, credits).catch((error) =>
        log?.error({ err: error, accountId }, "metering: checking the monthly limit failed"),
      );
    }
  }

  /** Keeps a running period total per account; reads it from the database when unknown, stale or rolled over. */
  private async checkLimit(accountId: string, addedCredits: number) {
    const now = Date.now();
    const known = this.totals.get(accountId);
    const stale = !known || now >= known.end || now - known.loadedAt > (this.options.totalsRefreshMs ?? 60_000);
    if (!stale && known) {
      known.total += addedCredits;
      if (known.total < known.limit || known.reached) return;
    }
    const result = await this.options.sink.enforceMonthlyLimit(accountId);
    this.totals.set(accountId, {
      total: result.total,
      limit: result.limit,
      end: result.end.getTime(),
      reached: result.reached,
      loadedAt: now,
    });
  }

  /**
   * When the account's billing period ends (ms since the epoch), which is when a LIMIT_REACHED endpoint
   * serves again; undefined while this process has not read it (after a start, or when another process
   * moved the endpoint): it is read then, for the next answer.
   */
  allowanceEndOf(accountId: string): number | undefined {
    const known = this.totals.get(accountId);
    if (known && known.end > Date.now()) return known.end;
    if (isUuid(accountId) && !this.reading.has(accountId)) {
      this.reading.add(accountId);
      void this.checkLimit(accountId, 0)
        .catch((error) => this.options.log?.error({ err: error, accountId }, "metering: reading the period failed"))
        .finally(() => this.reading.delete(accountId));
    }
    return undefined;
  }

  /** Prunes old error logs and endpoint metrics, and gives LIMIT_REACHED endpoints back when their period rolled over or the limit rose. */
  async housekeep(): Promise<void> {
    const { sink, log } = this.options;
    try {
      await sink.pruneFailedCalls(this.options.retentionDays);
      await sink.pruneEndpointMinutes();
      for (const accountId of await sink.accountsAtLimit()) {
        const result = await sink.enforceMonthlyLimit(accountId);
        this.totals.set(accountId, {
          total: result.total,
          limit: result.limit,
          end: result.end.getTime(),
          reached: result.reached,
          loadedAt: Date.now(),
        });
      }
    } catch (error) {
      log?.error({ err: error }, "metering: housekeeping failed");
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.housekeeping) clearInterval(this.housekeeping);
    await this.flush();
  }
}
