import type { DomainEvents } from "../../platform/events.ts";
import { EndpointCache, type EndpointDirectory } from "./directory.ts";
import type { CompiledEndpoint, EndpointRecord } from "./endpoint.ts";

/**
 * Where the directory reads endpoint records: the port the security domain fills from the database
 * (server/domains/security/endpoint-records.ts). No `where`: every endpoint.
 */
export type EndpointRecordSource = (where?: { ids?: string[]; exIds?: string[] }) => Promise<EndpointRecord[]>;

/**
 * The proxy's endpoint directory kept in step with the service's records: everything in memory, loaded at start.
 * Freshness: the "endpoint.changed" domain event reloads that endpoint at once, and the services emit it
 * with emitAndWait, so the mutation answers once this process's proxy serves the change. The service's
 * events relay (server/platform/events-relay.ts) brings that event from every other process (published
 * before the mutation answers), so a change made through any API process reaches every proxy process
 * within one round trip. A full reload runs every
 * `fullReloadMs` and on "relay.resynced" (the relay lost its connection and may have missed events).
 * A key that is not in memory is looked up once (then remembered as missing for a few seconds), which
 * covers an endpoint created a moment before its notification arrived.
 */
export class SyncedEndpointDirectory implements EndpointDirectory {
  private readonly cache = new EndpointCache();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribes: (() => void)[] = [];
  private closed = false;
  private readonly missing = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<CompiledEndpoint | undefined>>();
  private readonly rereads = new Map<string, NodeJS.Timeout>();
  private readonly reloading = new Map<string, Promise<void>>();

  constructor(
    private readonly records: EndpointRecordSource,
    private readonly events: DomainEvents,
    private readonly options: { fullReloadMs?: number; log?: (message: string, error?: unknown) => void } = {},
  ) {}

  async start(): Promise<void> {
    await this.reloadAll();
    const reloadFailed = (e: unknown) => this.options.log?.("endpoint directory reload failed", e);
    this.unsubscribes = [
      // The reload is returned: the services emit with emitAndWait, so a mutation answers only once the
      // proxy in this process serves the new state.
      this.events.on("endpoint.changed", ({ endpointId }) => {
        this.rereadSoon(endpointId);
        return this.invalidate(endpointId).catch(reloadFailed);
      }),
      this.events.on("relay.resynced", () => void this.reloadAll().catch(reloadFailed)),
    ];
    this.timer = setInterval(() => void this.reloadAll().catch(reloadFailed), this.options.fullReloadMs ?? 300_000);
    this.timer.unref();
  }

  get size(): number {
    return this.cache.size;
  }

  byExId(exId: string): CompiledEndpoint | undefined {
    return this.cache.byExId(exId);
  }

  byHost(host: string): CompiledEndpoint | undefined {
    return this.cache.byHost(host);
  }

  /** A key not in memory: one lookup in the records, shared by concurrent callers; misses are remembered for 5 s. */
  resolveMiss(exId: string): Promise<CompiledEndpoint | undefined> | undefined {
    const until = this.missing.get(exId);
    if (until !== undefined && until > Date.now()) return undefined;
    let pending = this.inFlight.get(exId);
    if (!pending) {
      pending = this.records({ exIds: [exId] })
        .then(([record]) => {
          if (record) {
            this.cache.put(record);
            return this.cache.byExId(exId);
          }
          if (this.missing.size >= 10_000) this.missing.clear();
          this.missing.set(exId, Date.now() + 5000);
          return undefined;
        })
        .catch(() => undefined)
        .finally(() => this.inFlight.delete(exId));
      this.inFlight.set(exId, pending);
    }
    return pending;
  }

  /**
   * Reloads one endpoint now (the security and endpoints services reach this through the domain event).
   * Reloads of one endpoint run one after another, so the last change's read is the one kept (two reads
   * in flight could otherwise land in the wrong order: a resume put back under the pause before it).
   */
  invalidate(endpointId: string): Promise<void> {
    const previous = this.reloading.get(endpointId);
    const next = previous
      ? previous.catch(() => undefined).then(() => this.reload(endpointId))
      : this.reload(endpointId);
    this.reloading.set(endpointId, next);
    const forget = () => {
      if (this.reloading.get(endpointId) === next) this.reloading.delete(endpointId);
    };
    next.then(forget, forget);
    return next;
  }

  private async reload(endpointId: string): Promise<void> {
    const [record] = await this.records({ ids: [endpointId] });
    if (record) {
      this.cache.put(record);
      this.missing.delete(record.exId);
    } else this.cache.remove(endpointId);
  }

  /**
   * Reads the endpoint once more a moment later: an event emitted inside a transaction arrives before
   * the commit, and the first read would keep the old state (a revoked token still valid) until the
   * next change. One pending re-read per endpoint.
   */
  private rereadSoon(endpointId: string): void {
    if (this.rereads.has(endpointId) || this.closed) return;
    const timer = setTimeout(() => {
      this.rereads.delete(endpointId);
      void this.invalidate(endpointId).catch(() => undefined);
    }, 250);
    timer.unref();
    this.rereads.set(endpointId, timer);
  }

  async reloadAll(): Promise<void> {
    this.cache.replaceAll(await this.records());
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    for (const timer of this.rereads.values()) clearTimeout(timer);
    this.rereads.clear();
    if (this.timer) clearInterval(this.timer);
  }
}
