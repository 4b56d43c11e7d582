import { createHash, createPublicKey, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { BlockList } from "node:net";
import path from "node:path";
import {
  hashToken,
  referrerHost,
  type SecurityOptionName,
  securityOptionNames,
} from "../../dataplane/proxy/endpoint.ts";
import { addIpRule } from "../../platform/client-address.ts";
import type { Db, Executor, Tx } from "../../platform/db/index.ts";
import { badInput, conflict, foundOr, notFound } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isUuid } from "../../platform/ids.ts";
import type { Role } from "../../platform/roles.ts";
import { toggleAddonMethod } from "../addons/service.ts";
import { type AuditEntryRow, endpointsAudit, recordAudit } from "../audit/service.ts";
import { findNetwork } from "../catalogue/networks.ts";
import { getEndpointOrFail } from "../endpoints/service.ts";
import * as store from "./store.ts";

/** How many items each list may hold per endpoint. */
export const limits = { tokens: 20, jwts: 20, entries: 100 } as const;

/** Who changes an endpoint's security: recorded in its audit (userId null for the service itself). */
export interface Actor {
  accountId: string;
  userId: string | null;
  role: Role;
}

type AuditAction = "TURN_ON" | "TURN_OFF" | "ADD" | "REMOVE" | "SET";

/** Keeps one change in the endpoint's security audit, in the transaction that makes it. */
async function audit(
  tx: Executor,
  actor: Actor,
  endpointId: string,
  action: AuditAction,
  subject: SecurityOptionName | "rpcMethods",
  detail: string | null = null,
) {
  await recordAudit(tx, actor, { area: "SECURITY", endpointId, action, subject, detail });
}

/**
 * The option a list's first item turns on (as other providers' consoles do): adding an IP, referrer,
 * domain mask or JWT key to an empty list means "check this". Request filters are left as they are:
 * a method list is a restriction users build up before they turn it on.
 */
const optionOfFirstItem: Partial<Record<store.EntryKind | "JWT", SecurityOptionName>> = {
  IP: "ips",
  REFERRER: "referrers",
  DOMAIN_MASK: "domainMasks",
  JWT: "jwts",
};

/** Turns `option` on when the list just got its first item and the option was off; audited. */
async function turnOnWithFirstItem(
  tx: Executor,
  actor: Actor,
  endpointId: string,
  kind: store.EntryKind | "JWT",
  itemsBefore: number,
) {
  const option = optionOfFirstItem[kind];
  if (!option || itemsBefore > 0) return;
  const current = await store.getSecurity(tx, actor.accountId, endpointId);
  if (current?.[option]) return;
  await store.upsertSecurity(tx, actor.accountId, endpointId, { [option]: true });
  await audit(tx, actor, endpointId, "TURN_ON", option, "with its first item");
}

const methodCatalogue = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../../schemas/catalogue/rpc-methods.json"), "utf8"),
) as Record<string, { name: string; description: string }[]>;

export type OptionsView = Record<SecurityOptionName, boolean> & { ipCustomHeaderName: string | null };

function optionsView(row: store.SecurityRow | undefined): OptionsView {
  const view = { ipCustomHeaderName: row?.ipCustomHeaderName ?? null } as OptionsView;
  for (const name of securityOptionNames) view[name] = row ? row[name] : false;
  return view;
}

/** The masked form a token is listed as after creation. */
export const maskToken = (prefix: string) => `${prefix}${"•".repeat(8)}`;

function tokenView(row: store.TokenRow, value?: string) {
  return { id: row.id, token: value ?? maskToken(row.tokenPrefix), type: "token", createdAt: row.createdAt };
}

async function endpointOrFail(db: Executor, accountId: string, endpointId: string, change: boolean) {
  const row = await getEndpointOrFail(db, accountId, endpointId);
  if (change && row.status === "ARCHIVED") throw conflict("This endpoint is archived and can no longer be changed.");
  return row;
}

/** Waits until the change is in force at this process's proxy and published to the others. */
const changed = (events: DomainEvents, accountId: string, endpointId: string) =>
  events.emitAndWait("endpoint.changed", { accountId, endpointId });

export async function securityOf(db: Db, accountId: string, endpointId: string) {
  await endpointOrFail(db, accountId, endpointId, false);
  const [view] = await securityOfEndpoints(db, accountId, [endpointId]);
  return view;
}

/** The security settings of endpoints the caller has already read (so known to be the account's), in order. */
export async function securityOfEndpoints(db: Executor, accountId: string, endpointIds: readonly string[]) {
  const ids = [...endpointIds];
  const [options, tokens, jwts, entries, audits] = await Promise.all([
    store.securityOf(db, accountId, ids),
    store.tokensOf(db, accountId, ids),
    store.jwtsOf(db, accountId, ids),
    store.entriesOf(db, accountId, ids),
    endpointsAudit(db, accountId, "SECURITY", ids, 100),
  ]);
  return ids.map((endpointId) => {
    const of = (kind: store.EntryKind) => entries.filter((e) => e.endpointId === endpointId && e.kind === kind);
    return {
      options: optionsView(options.find((o) => o.endpointId === endpointId)),
      tokens: tokens.filter((t) => t.endpointId === endpointId).map((t) => tokenView(t)),
      jwts: jwts
        .filter((j) => j.endpointId === endpointId)
        .map((j) => ({ id: j.id, name: j.name, kid: j.kid, fingerprint: j.fingerprint, publicKey: j.publicKey })),
      referrers: of("REFERRER").map((e) => ({ id: e.id, referrer: e.value })),
      ips: of("IP").map((e) => ({ id: e.id, ip: e.value })),
      domainMasks: of("DOMAIN_MASK").map((e) => ({ id: e.id, host: e.value })),
      requestFilters: of("REQUEST_FILTER").map((e) => ({ id: e.id, method: e.value })),
      audit: audits.filter((a) => a.endpointId === endpointId).map(auditView),
    };
  });
}

function auditView(row: AuditEntryRow) {
  return {
    id: row.id,
    date: row.createdAt,
    action: row.action,
    subject: row.subject,
    detail: row.detail,
    user: row.userEmail,
    userRole: row.userRole,
  };
}

export async function optionsOf(db: Executor, accountId: string, endpointId: string): Promise<OptionsView> {
  return optionsView(await store.getSecurity(db, accountId, endpointId));
}

/** The options of several endpoints, in order. */
export async function optionsOfEndpoints(
  db: Executor,
  accountId: string,
  endpointIds: readonly string[],
): Promise<OptionsView[]> {
  const rows = await store.securityOf(db, accountId, [...endpointIds]);
  return endpointIds.map((id) => optionsView(rows.find((r) => r.endpointId === id)));
}

export async function updateOption(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  endpointId: string,
  option: SecurityOptionName,
  enabled: boolean,
): Promise<OptionsView> {
  const { accountId } = actor;
  if (!securityOptionNames.includes(option))
    throw badInput([{ pointer: "/option", message: `Unknown option ${option}.` }]);
  await endpointOrFail(db, accountId, endpointId, true);
  const row = await db.transaction(async (tx) => {
    const current = await store.getSecurity(tx, accountId, endpointId);
    if (enabled && option === "ipCustomHeader" && !current?.ipCustomHeaderName) {
      throw badInput([
        { pointer: "/option", message: "Name the client IP header first (for example cf-connecting-ip)." },
      ]);
    }
    const row = await store.upsertSecurity(tx, accountId, endpointId, { [option]: enabled });
    if (Boolean(current?.[option]) !== enabled)
      await audit(tx, actor, endpointId, enabled ? "TURN_ON" : "TURN_OFF", option);
    return row;
  });
  await changed(events, accountId, endpointId);
  return optionsView(row);
}

export async function updateIpCustomHeader(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  endpointId: string,
  header: string,
) {
  const { accountId } = actor;
  await endpointOrFail(db, accountId, endpointId, true);
  const name = header.trim().toLowerCase();
  const row = await db.transaction(async (tx) => {
    const updated = await store.upsertSecurity(tx, accountId, endpointId, { ipCustomHeaderName: name });
    await audit(tx, actor, endpointId, "SET", "ipCustomHeader", name);
    return updated;
  });
  await changed(events, accountId, endpointId);
  return optionsView(row);
}

async function addToken(tx: Executor, accountId: string, endpointId: string) {
  // 32 random bytes: SHA-256 without a salt is enough for a value that cannot be guessed.
  const value = randomBytes(32).toString("hex");
  const row = await store.insertToken(tx, accountId, endpointId, {
    tokenHash: hashToken(value),
    tokenPrefix: value.slice(0, 4),
  });
  return { row, value };
}

/**
 * Gives a new endpoint its first token and turns token authentication on. Call it inside the transaction
 * that creates the endpoint (it has the EndpointCreatedHook signature's needs); returns the token, to show once.
 */
export async function createInitialToken(tx: Tx, accountId: string, endpointId: string): Promise<string> {
  await store.upsertSecurity(tx, accountId, endpointId, { tokens: true });
  const { value } = await addToken(tx, accountId, endpointId);
  return value;
}

/** An EndpointCreatedHook: token authentication on, with a first token shown once in the creation's answer. */
export async function initialTokenHook(tx: Tx, endpoint: { id: string; accountId: string }) {
  return { initialToken: await createInitialToken(tx, endpoint.accountId, endpoint.id) };
}

export async function createToken(db: Db, events: DomainEvents, actor: Actor, endpointId: string) {
  const { accountId } = actor;
  await endpointOrFail(db, accountId, endpointId, true);
  const created = await db.transaction(async (tx) => {
    await store.lockSecurity(tx, accountId, endpointId);
    if ((await store.countTokens(tx, accountId, endpointId)) >= limits.tokens) {
      throw conflict(`An endpoint can have at most ${limits.tokens} tokens; delete one first.`);
    }
    const added = await addToken(tx, accountId, endpointId);
    await audit(tx, actor, endpointId, "ADD", "tokens", maskToken(added.row.tokenPrefix));
    return added;
  });
  await changed(events, accountId, endpointId);
  return tokenView(created.row, created.value);
}

export async function deleteToken(db: Db, events: DomainEvents, actor: Actor, endpointId: string, tokenId: string) {
  const { accountId } = actor;
  await endpointOrFail(db, accountId, endpointId, false);
  await db.transaction(async (tx) => {
    const row = isUuid(tokenId) ? await store.deleteToken(tx, accountId, endpointId, tokenId) : undefined;
    if (!row) throw notFound("The token");
    await audit(tx, actor, endpointId, "REMOVE", "tokens", maskToken(row.tokenPrefix));
  });
  await changed(events, accountId, endpointId);
}

/** Parses an uploaded public key; returns its normalised PEM and fingerprint, or throws naming the field. */
export function parsePublicKey(text: string): { pem: string; fingerprint: string } {
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey(text.trim());
  } catch {
    throw badInput([{ pointer: "/publicKey", message: "This is not a PEM public key (-----BEGIN PUBLIC KEY-----)." }]);
  }
  if (!["rsa", "rsa-pss", "ec", "ed25519", "ed448"].includes(key.asymmetricKeyType ?? "")) {
    throw badInput([{ pointer: "/publicKey", message: "Use an RSA, EC or Ed25519 public key." }]);
  }
  const der = key.export({ type: "spki", format: "der" });
  return {
    pem: key.export({ type: "spki", format: "pem" }).toString(),
    fingerprint: createHash("sha256").update(der).digest("hex"),
  };
}

export async function createJwt(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  endpointId: string,
  input: { name: string; publicKey: string; kid: string },
) {
  const { accountId } = actor;
  await endpointOrFail(db, accountId, endpointId, true);
  const { pem, fingerprint } = parsePublicKey(input.publicKey);
  const row = await db.transaction(async (tx) => {
    await store.lockSecurity(tx, accountId, endpointId);
    const before = await store.countJwts(tx, accountId, endpointId);
    if (before >= limits.jwts) {
      throw conflict(`An endpoint can have at most ${limits.jwts} JWT keys; delete one first.`);
    }
    const inserted = await store.insertJwt(tx, accountId, endpointId, {
      name: input.name.trim(),
      kid: input.kid.trim(),
      publicKey: pem,
      fingerprint,
    });
    if (!inserted) throw conflict(`This endpoint already has a key with kid "${input.kid.trim()}".`);
    await audit(tx, actor, endpointId, "ADD", "jwts", `${inserted.name} (kid ${inserted.kid})`);
    await turnOnWithFirstItem(tx, actor, endpointId, "JWT", before);
    return inserted;
  });
  await changed(events, accountId, endpointId);
  return { id: row.id, name: row.name, kid: row.kid, fingerprint: row.fingerprint, publicKey: row.publicKey };
}

export async function deleteJwt(db: Db, events: DomainEvents, actor: Actor, endpointId: string, jwtId: string) {
  const { accountId } = actor;
  await endpointOrFail(db, accountId, endpointId, false);
  await db.transaction(async (tx) => {
    const row = isUuid(jwtId) ? await store.deleteJwt(tx, accountId, endpointId, jwtId) : undefined;
    if (!row) throw notFound("The JWT key");
    await audit(tx, actor, endpointId, "REMOVE", "jwts", `${row.name} (kid ${row.kid})`);
  });
  await changed(events, accountId, endpointId);
}

const entryField: Record<store.EntryKind, string> = {
  REFERRER: "/referrer",
  IP: "/ip",
  DOMAIN_MASK: "/host",
  REQUEST_FILTER: "/method",
};
/** The option each list belongs to, as the audit names it. */
const entryOption: Record<store.EntryKind, SecurityOptionName> = {
  REFERRER: "referrers",
  IP: "ips",
  DOMAIN_MASK: "domainMasks",
  REQUEST_FILTER: "requestFilters",
};
const entryName: Record<store.EntryKind, string> = {
  REFERRER: "referrer",
  IP: "IP rule",
  DOMAIN_MASK: "domain mask",
  REQUEST_FILTER: "request filter",
};

/** The one place each list's values are checked and normalised beyond what the JSON Schema says. */
export function normaliseEntry(kind: store.EntryKind, raw: string, network: string): string {
  const value = raw.trim();
  const bad = (message: string) => badInput([{ pointer: entryField[kind], message }]);
  switch (kind) {
    case "REFERRER": {
      const wildcard = value.startsWith("*.");
      const host = referrerHost(wildcard ? value.slice(2) : value);
      if (!host || host.includes("*"))
        throw bad("Enter a host like app.example.com, *.example.com or https://app.example.com:8443.");
      return wildcard ? `*.${host}` : host;
    }
    case "IP": {
      if (!addIpRule(new BlockList(), value))
        throw bad("Enter an IPv4 or IPv6 address, or a CIDR range like 10.0.0.0/8.");
      return value.toLowerCase();
    }
    case "DOMAIN_MASK":
      return value.toLowerCase().replace(/\.$/, "");
    case "REQUEST_FILTER": {
      const compatibility = findNetwork(network)?.chain.chainCompatibility ?? "evm";
      const known = methodCatalogue[compatibility];
      if (known && !known.some((m) => m.name === value))
        throw bad(`${value} is not a ${compatibility.toUpperCase()} method this endpoint knows.`);
      return value;
    }
  }
}

export async function createEntry(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  endpointId: string,
  kind: store.EntryKind,
  raw: string,
  /** The console's own hosts (no domain mask may take them); null when they are not known. */
  consoleHosts: string[] | null = [],
) {
  const { accountId } = actor;
  const endpoint = await endpointOrFail(db, accountId, endpointId, true);
  const value = normaliseEntry(kind, raw, endpoint.network);
  if (kind === "DOMAIN_MASK" && consoleHosts === null) {
    throw conflict("Domain masks need the service's PUBLIC_URL: without it every host name may be the console's own.");
  }
  if (kind === "DOMAIN_MASK" && consoleHosts?.map((h) => h.toLowerCase()).includes(value)) {
    throw badInput([{ pointer: "/host", message: "This host serves the console; choose your own domain." }]);
  }
  const row = await db.transaction(async (tx) => {
    await store.lockSecurity(tx, accountId, endpointId);
    const before = await store.countEntries(tx, accountId, endpointId, kind);
    if (before >= limits.entries) {
      throw conflict(`An endpoint can have at most ${limits.entries} ${entryName[kind]}s.`);
    }
    const inserted = await store.insertEntry(tx, accountId, endpointId, kind, value);
    if (!inserted) {
      throw conflict(
        kind === "DOMAIN_MASK"
          ? `The host ${value} is already in use.`
          : `This ${entryName[kind]} is already in the list.`,
      );
    }
    await audit(tx, actor, endpointId, "ADD", entryOption[kind], value);
    await turnOnWithFirstItem(tx, actor, endpointId, kind, before);
    return inserted;
  });
  await changed(events, accountId, endpointId);
  return row;
}

export async function deleteEntry(db: Db, events: DomainEvents, actor: Actor, kind: store.EntryKind, id: string) {
  const { accountId } = actor;
  const row = await db.transaction(async (tx) => {
    const deleted = foundOr(
      isUuid(id) ? await store.deleteEntry(tx, accountId, kind, id) : undefined,
      `The ${entryName[kind]}`,
    );
    await audit(tx, actor, deleted.endpointId, "REMOVE", entryOption[kind], deleted.value);
    return deleted;
  });
  await changed(events, accountId, row.endpointId);
}

/** The methods known for the endpoint's chain, each with whether it is disabled there. */
export async function rpcMethods(db: Db, accountId: string, endpointId: string) {
  const endpoint = await endpointOrFail(db, accountId, endpointId, false);
  const [methods] = await rpcMethodsOfEndpoints(db, accountId, [endpoint]);
  return methods;
}

/** The methods of endpoints the caller has already read, each marked disabled or not, in order. */
export async function rpcMethodsOfEndpoints(
  db: Executor,
  accountId: string,
  endpoints: readonly { id: string; network: string }[],
) {
  const disabled = await store.disabledMethodsOf(
    db,
    accountId,
    endpoints.map((e) => e.id),
  );
  return endpoints.map((endpoint) => {
    const off = new Set(disabled.filter((d) => d.endpointId === endpoint.id).map((d) => d.method));
    const compatibility = findNetwork(endpoint.network)?.chain.chainCompatibility ?? "evm";
    const known = methodCatalogue[compatibility] ?? [];
    return known.map((m) => ({ id: m.name, name: m.name, description: m.description, disabled: off.has(m.name) }));
  });
}

export async function toggleRpcMethod(db: Db, events: DomainEvents, actor: Actor, endpointId: string, method: string) {
  const { accountId } = actor;
  const endpoint = await endpointOrFail(db, accountId, endpointId, true);
  const compatibility = findNetwork(endpoint.network)?.chain.chainCompatibility ?? "evm";
  const chainMethod = (methodCatalogue[compatibility] ?? []).find((m) => m.name === method);
  // A method of an add-on installed here is turned off on its install (the add-ons domain's half).
  if (!chainMethod) {
    const addonMethod = await toggleAddonMethod(db, events, accountId, endpointId, method);
    return foundOr(addonMethod, `The method ${method}`);
  }
  const known = chainMethod;
  const disabled = await db.transaction(async (tx) => {
    const now = await store.toggleDisabledMethod(tx, accountId, endpointId, method);
    await audit(tx, actor, endpointId, now ? "TURN_OFF" : "TURN_ON", "rpcMethods", method);
    return now;
  });
  await changed(events, accountId, endpointId);
  return { id: known.name, name: known.name, description: known.description, disabled };
}
