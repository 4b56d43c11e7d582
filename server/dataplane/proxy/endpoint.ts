import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { BlockList } from "node:net";
import { errors as joseErrors, jwtVerify } from "jose";
import { addIpRule } from "../../platform/client-address.ts";

export const securityOptionNames = [
  "jwts",
  "tokens",
  "referrers",
  "domainMasks",
  "ips",
  "requestFilters",
  "ipCustomHeader",
  "hsts",
  "cors",
  "enforceChainNetwork",
] as const;
export type SecurityOptionName = (typeof securityOptionNames)[number];
export type SecurityOptions = Record<SecurityOptionName, boolean>;

export const defaultSecurityOptions = (): SecurityOptions => ({
  jwts: false,
  tokens: false,
  referrers: false,
  domainMasks: false,
  ips: false,
  requestFilters: false,
  ipCustomHeader: false,
  hsts: false,
  cors: false,
  enforceChainNetwork: false,
});

/** What the proxy needs to know about one endpoint: loaded from PostgreSQL, no secrets in clear. */
export interface EndpointRecord {
  id: string;
  exId: string;
  accountId: string;
  network: string;
  /** The network's chain id from the catalogue (null for non-EVM networks). */
  chainId: number | null;
  status: string;
  options: SecurityOptions;
  /** The header holding the client's IP when the ipCustomHeader option is on (e.g. cf-connecting-ip). */
  ipCustomHeaderName: string | null;
  /** Hex SHA-256 of each token. */
  tokenHashes: string[];
  jwts: { kid: string; publicKey: string }[];
  referrers: string[];
  ips: string[];
  domainMasks: string[];
  requestFilterMethods: string[];
  disabledMethods: string[];
  /**
   * Methods, and namespaces ("trace" for every trace_ method), of add-ons not installed on this endpoint,
   * each with the add-on's name: refused naming it. Absent when no add-on gates anything here.
   */
  addonLocks?: { methods: [string, string][]; namespaces: [string, string][] };
  /**
   * Whether calls reading state at blocks older than the served node keeps go to the network's archive node
   * (the Archive add-on is installed here). Absent: they go to the served node, which answers its own error.
   */
  archive?: boolean;
}

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Normalises a referrer entry or a Referer/Origin header to a host (with port when given). */
export function referrerHost(value: string): string | null {
  const text = value.trim().toLowerCase();
  if (!text) return null;
  try {
    return new URL(text.includes("://") ? text : `http://${text}`).host || null;
  } catch {
    return null;
  }
}

/** Remembers a decision in a map that is emptied when full, so distinct inputs cannot grow memory without limit. */
export function remember(map: Map<string, boolean>, key: string, value: boolean): boolean {
  if (map.size >= 10_000) map.clear();
  map.set(key, value);
  return value;
}

/** Verifies JWTs against the endpoint's keys by kid, remembering good tokens until they expire. */
class JwtVerifier {
  private keys = new Map<string, KeyObject>();
  private verified = new Map<string, number>();

  constructor(jwts: { kid: string; publicKey: string }[]) {
    for (const j of jwts) {
      try {
        this.keys.set(j.kid, createPublicKey(j.publicKey));
      } catch {
        // The service validates keys on upload; a key that no longer parses simply matches nothing.
      }
    }
  }

  async verify(token: string): Promise<boolean> {
    const nowSeconds = Date.now() / 1000;
    const exp = this.verified.get(token);
    if (exp !== undefined) {
      if (exp > nowSeconds) return true;
      this.verified.delete(token);
    }
    try {
      const { payload } = await jwtVerify(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : this.keys.get(header.kid);
          if (!key) throw new joseErrors.JWKSNoMatchingKey();
          return key;
        },
        { requiredClaims: ["exp"] },
      );
      // Bounded so a client sending many distinct tokens cannot grow memory without limit.
      if (this.verified.size >= 10_000) this.verified.clear();
      this.verified.set(token, payload.exp as number);
      return true;
    } catch {
      return false;
    }
  }
}

/** An endpoint record compiled into the structures the hot path checks in O(1). */
export interface CompiledEndpoint {
  record: EndpointRecord;
  tokenHashes: Set<string>;
  ipRules: BlockList;
  referrerHosts: Set<string>;
  /** Wildcard referrers ("*.example.com") as their suffix ".example.com". */
  referrerSuffixes: string[];
  filterMethods: Set<string>;
  disabledMethods: Set<string>;
  /** Gated method → the name of the add-on it needs; then by namespace. */
  lockedMethods: Map<string, string>;
  lockedNamespaces: Map<string, string>;
  jwt: JwtVerifier;
  /** Decisions already taken for a client IP or a presented token (bounded), so repeat callers cost one Map lookup. */
  ipDecisions: Map<string, boolean>;
  tokenDecisions: Map<string, boolean>;
  /** Response headers added by the hsts option, computed once. */
  extraHeaders: Record<string, string>;
}

/** The shared "no extra response headers" value, so the hot path can tell it apart by identity. */
export const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export function compileEndpoint(record: EndpointRecord): CompiledEndpoint {
  const ipRules = new BlockList();
  for (const rule of record.ips) addIpRule(ipRules, rule);
  const referrerHosts = new Set<string>();
  const referrerSuffixes: string[] = [];
  for (const r of record.referrers) {
    const trimmed = r.trim().toLowerCase();
    if (trimmed.startsWith("*.")) {
      const host = referrerHost(trimmed.slice(2));
      if (host) referrerSuffixes.push(`.${host}`);
    } else {
      const host = referrerHost(trimmed);
      if (host) referrerHosts.add(host);
    }
  }
  const extraHeaders: Record<string, string> = record.options.hsts
    ? { "strict-transport-security": "max-age=31536000; includeSubDomains" }
    : NO_HEADERS;
  return {
    record,
    tokenHashes: new Set(record.tokenHashes),
    ipRules,
    referrerHosts,
    referrerSuffixes,
    filterMethods: new Set(record.requestFilterMethods),
    disabledMethods: new Set(record.disabledMethods),
    lockedMethods: new Map(record.addonLocks?.methods),
    lockedNamespaces: new Map(record.addonLocks?.namespaces),
    jwt: new JwtVerifier(record.jwts),
    ipDecisions: new Map(),
    tokenDecisions: new Map(),
    extraHeaders,
  };
}
