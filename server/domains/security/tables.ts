import { sql } from "drizzle-orm";
import { boolean, index, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";

/** One row per endpoint that has had a security setting changed; no row means every option is off. */
export const endpointSecurity = pgTable("endpoint_security", {
  endpointId: uuid("endpoint_id")
    .primaryKey()
    .references(() => endpoints.id, { onDelete: "cascade" }),
  accountId: accountIdColumn(),
  jwts: boolean("jwts").notNull().default(false),
  tokens: boolean("tokens").notNull().default(false),
  referrers: boolean("referrers").notNull().default(false),
  domainMasks: boolean("domain_masks").notNull().default(false),
  ips: boolean("ips").notNull().default(false),
  requestFilters: boolean("request_filters").notNull().default(false),
  ipCustomHeader: boolean("ip_custom_header").notNull().default(false),
  hsts: boolean("hsts").notNull().default(false),
  cors: boolean("cors").notNull().default(false),
  enforceChainNetwork: boolean("enforce_chain_network").notNull().default(false),
  /** The request header naming the client's IP behind a CDN, e.g. cf-connecting-ip. */
  ipCustomHeaderName: text("ip_custom_header_name"),
  updatedAt: updatedAtColumn(),
});

/** Endpoint tokens: only a SHA-256 of the value is kept (the value is shown once, at creation). */
export const endpointTokens = pgTable(
  "endpoint_tokens",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    /** The first characters of the token, to tell tokens apart in the list. */
    tokenPrefix: text("token_prefix").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [index("endpoint_tokens_endpoint").on(t.endpointId)],
);

export const endpointJwts = pgTable(
  "endpoint_jwts",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kid: text("kid").notNull(),
    /** PEM (SPKI) public key; public material, shown in the list. */
    publicKey: text("public_key").notNull(),
    /** SHA-256 of the key's DER encoding, hex. */
    fingerprint: text("fingerprint").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [uniqueIndex("endpoint_jwts_endpoint_kid").on(t.endpointId, t.kid)],
);

/**
 * The plain-text lists of endpoint security: REFERRER, IP (address or CIDR), DOMAIN_MASK (host) and
 * REQUEST_FILTER (a method name). A domain mask routes a host to one endpoint, so hosts are unique overall.
 */
export const endpointSecurityEntries = pgTable(
  "endpoint_security_entries",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    value: text("value").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    uniqueIndex("endpoint_security_entries_value").on(t.endpointId, t.kind, sql`lower(${t.value})`),
    uniqueIndex("endpoint_security_domain_mask_host").on(sql`lower(${t.value})`).where(sql`${t.kind} = 'DOMAIN_MASK'`),
  ],
);

/** RPC methods switched off on one endpoint (toggleRpcMethod). */
export const endpointDisabledMethods = pgTable(
  "endpoint_disabled_methods",
  {
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    method: text("method").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.method] })],
);
