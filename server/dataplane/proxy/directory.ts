import { type CompiledEndpoint, compileEndpoint, type EndpointRecord } from "./endpoint.ts";

/**
 * Where the proxy finds endpoints. Lookups are synchronous on the hot path: an implementation keeps
 * every endpoint in memory and refreshes it on change; it never queries a database per request.
 */
export interface EndpointDirectory {
  byExId(exId: string): CompiledEndpoint | undefined;
  /** The endpoint a domain mask routes to; only masks whose endpoint has the domainMasks option on. */
  byHost(host: string): CompiledEndpoint | undefined;
  /** Optional: a key not in memory may be looked up once in the store (undefined: do not wait, it is unknown). */
  resolveMiss?(exId: string): Promise<CompiledEndpoint | undefined> | undefined;
}

/** The in-memory index every directory keeps; fed whole records, it compiles them once. */
export class EndpointCache implements EndpointDirectory {
  private byEx = new Map<string, CompiledEndpoint>();
  private byId = new Map<string, CompiledEndpoint>();
  private hosts = new Map<string, CompiledEndpoint>();

  byExId(exId: string): CompiledEndpoint | undefined {
    return this.byEx.get(exId);
  }

  byHost(host: string): CompiledEndpoint | undefined {
    if (this.hosts.size === 0) return undefined;
    const colon = host.lastIndexOf(":");
    const name = (colon > 0 && !host.endsWith("]") ? host.slice(0, colon) : host).toLowerCase();
    return this.hosts.get(name);
  }

  get size(): number {
    return this.byId.size;
  }

  put(record: EndpointRecord): void {
    this.remove(record.id);
    const compiled = compileEndpoint(record);
    this.byId.set(record.id, compiled);
    this.byEx.set(record.exId, compiled);
    if (record.options.domainMasks) for (const host of record.domainMasks) this.hosts.set(host.toLowerCase(), compiled);
  }

  remove(endpointId: string): void {
    const old = this.byId.get(endpointId);
    if (!old) return;
    this.byId.delete(endpointId);
    if (this.byEx.get(old.record.exId) === old) this.byEx.delete(old.record.exId);
    for (const host of old.record.domainMasks) {
      if (this.hosts.get(host.toLowerCase()) === old) this.hosts.delete(host.toLowerCase());
    }
  }

  replaceAll(records: EndpointRecord[]): void {
    this.byEx.clear();
    this.byId.clear();
    this.hosts.clear();
    for (const r of records) this.put(r);
  }
}
