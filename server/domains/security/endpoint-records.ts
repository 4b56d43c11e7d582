import { eq, inArray } from "drizzle-orm";
import { defaultSecurityOptions, type EndpointRecord, securityOptionNames } from "../../dataplane/proxy/endpoint.ts";
import type { EndpointRecordSource } from "../../dataplane/proxy/synced-directory.ts";
import type { Db } from "../../platform/db/index.ts";
import { addonLocksOf } from "../addons/service.ts";
import { findNetwork } from "../catalogue/networks.ts";
import { endpoints } from "../endpoints/tables.ts";
import {
  endpointDisabledMethods,
  endpointJwts,
  endpointSecurity,
  endpointSecurityEntries,
  endpointTokens,
} from "./tables.ts";

/** The proxy's endpoint records on this service's database. */
export const databaseEndpointRecords =
  (db: Db): EndpointRecordSource =>
  (where) =>
    loadEndpointRecords(db, where);

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
  const [tokens, jwts, entries, disabled, addonLocks] = await Promise.all([
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
    addonLocksOf(db, scoped ? ids : undefined),
  ]);
  const records = new Map<string, EndpointRecord>();
  for (const { endpoint, security } of rows) {
    const options = defaultSecurityOptions();
    if (security) for (const name of securityOptionNames) options[name] = security[name];
    const locks = addonLocks(endpoint.id);
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
      disabledMethods: [...locks.disabledMethods],
      addonLocks: { methods: locks.lockedMethods, namespaces: locks.lockedNamespaces },
      archive: locks.archive,
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
