import { eq, inArray } from "drizzle-orm";
import { findNetwork } from "../../domains/catalogue/networks.ts";
import { endpoints } from "../../domains/endpoints/tables.ts";
import {
  endpointDisabledMethods,
  endpointJwts,
  endpointSecurity,
  endpointSecurityEntries,
  endpointTokens,
} from "../../domains/security/tables.ts";
import type { Db } from "../../platform/db/index.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { EndpointCache, type EndpointDirectory } from "./directory.ts";
import { type CompiledEndpoint, defaultSecurityOptions, type EndpointRecord, securityOptionNames } from "./endpoint.ts";

/**
 * Reads endpoint records for the data plane. This is the one query path that is not scoped to an account:
 * the proxy serves every account's endpoints, and nothing read here is returned to a user.
 */
export async function loadEndpointRecords(
  db: Db,
  where: { ids?: string[]; exIds?: string[] } = {},
): Promise<EndpointRecord[]> {
  const base = db
    .select({ endpoint: endpoints, security: endpointSecurity })
    .from(endpoints)
    .leftJoin(endpointSecurity, eq(endpointSecurity.endpointId, endpoints.id));
  const rows = where.ids
    ? await base.where(inArray(endpoints.id, where.ids))
    : where.exIds
      ? await base.where(inArray(endpoints.exId, where.exIds))
      : await base;
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.endpoint.id);
  const scoped = where.ids || where.exIds;
  const [tokens, jwts, entries, disabled] = await Promise.all([
    db
      .select({ endpointId: endpointTokens.endpointId, hash: endpointTokens.tokenHash })
      .from(endpointTokens)
      .where(scoped ? inArray(endpointTokens.endpointId, ids) : undefined),
    db
      .select({ endpointId: endpointJwts.endpointId, kid: endpointJwts.kid, publicKey: endpointJwts.publicKey })
      .from(endpointJwts)
      .where(scoped ? inArray(endpointJwts.endpointId, ids) : undefined),
    db
      .select({
        endpointId: endpointSecurityEntries.endpointId,
        kind: endpointSecurityEntries.kind,
        value: endpointSecurityEntries.value,
      })
      .from(endpointSecurityEntries)
      .where(scoped ? inArray(endpointSecurityEntries.endpointId, ids) : undefined),
    db
      .select({ endpointId: endpointDisabledMethods.endpointId, method: endpointDisabledMethods.method })
      .from(endpointDisabledMethods)
      .where(scoped ? inArray(endpointDisabledMethods.endpointId, ids) : undefined),
  ]);
  const records = new Map<string, EndpointRecord>();
  for (const { endpoint, security } of rows) {
    const options = defaultSecurityOptions();
    if (security) for (const name of securityOptionNames) options[name] = security[name];
    records.set(endpoint.id, {
      id: endpoint.id,
      exId: endpoint.exId,
      accountId: endpoint.accountId,
      network: endpoint.network,
      chainId: findNetwork(endpoint.network)?.network.chainId ?? null,
      status: endpoint.status,
      options,
      ipCustomHeaderName: security?.ipCustomHeaderName ?? null,
      tokenHashes: [],
      jwts: [],
      referrers: [],
      ips: [],
      domainMasks: [],
      requestFilterMethods: [],
      disabledMethods: [],
    });
  }
  for (const t of tokens) records.get(t.endpointId)?.tokenHashes.push(t.hash);
  for (const j of jwts) records.get(j.endpointId)?.jwts.push({ kid: j.kid, publicKey: j.publicKey });
  for (const e of entries) {
    const r = records.get(e.endpointId);
    if (!r) continue;
    if (e.kind === "REFERRER") r.referrers.push(e.value);
    else if (e.kind === "IP") r.ips.push(e.value);
    else if (e.kind === "DOMAIN_MASK") r.domainMasks.push(e.value);
    else if (e.kind === "REQUEST_FILTER") r.requestFilterMethods.push(e.value);
  }
  for (const d of disabled) records.get(d.endpointId)?.disabledMethods.push(d.method);
  return [...records.values()];
}

/**
 * The proxy's endpoint directory backed by PostgreSQL: everything in memory, loaded at start.
 * Freshness: the "endpoint.changed" domain event reloads that endpoint at once. The service's events
 * relay (server/platform/events-relay.ts) brings that event from every other process, so a change made
 * through any API process reaches every proxy process within one round trip. A full reload runs every
 * `fullReloadMs` and on "relay.resynced" (the relay lost its connection and may have missed events).
 * A key that is not in memory is looked up once (then remembered as missing for a few seconds), which
 * covers an endpoint created a moment before its notification arrived.
 */
export class PgEndpointDirectory implements EndpointDirectory {
  private readonly cache = new EndpointCache();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribes: (() => void)[] = [];
  private closed = false;
  private readonly missing = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<CompiledEndpoint | undefined>>();
  private readonly rereads = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly db: Db,
    private readonly events: DomainEvents,
    private readonly options: { fullReloadMs?: number; log?: (message: string, error?: unknown) => void } = {},
  ) {}

  async start(): Promise<void> {
    await this.reloadAll();
    const reloadFailed = (e: unknown) => this.options.log?.("endpoint directory reload failed", e);
    this.unsubscribes = [
      this.events.on("endpoint.changed", ({ endpointId }) => {
        void this.invalidate(endpointId).catch(reloadFailed);
        this.rereadSoon(endpointId);
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

  /** A key not in memory: one database lookup, shared by concurrent callers; misses are remembered for 5 s. */
  resolveMiss(exId: string): Promise<CompiledEndpoint | undefined> | undefined {
    const until = this.missing.get(exId);
    if (until !== undefined && until > Date.now()) return undefined;
    let pending = this.inFlight.get(exId);
    if (!pending) {
      pending = loadEndpointRecords(this.db, { exIds: [exId] })
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

  /** Reloads one endpoint now (the security and endpoints services reach this through the domain event). */
  async invalidate(endpointId: string): Promise<void> {
    const [record] = await loadEndpointRecords(this.db, { ids: [endpointId] });
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
    this.cache.replaceAll(await loadEndpointRecords(this.db));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    for (const timer of this.rereads.values()) clearTimeout(timer);
    this.rereads.clear();
    if (this.timer) clearInterval(this.timer);
  }
}
