// Who a session cookie belongs to, read on every API request: kept in the process so a signed-in
// request costs no database round trip. Every change that ends a session or changes what it may do
// (sign-out, password change, role change) emits "sessions.changed", which the events relay carries to
// every other process; each drops that user's cached sessions at once.
import { and, eq, sql } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { Db } from "../../platform/db/index.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isRole, type Role } from "../../platform/roles.ts";
import { hashSessionToken } from "./service.ts";
import { memberships, sessions } from "./tables.ts";

export interface SessionPrincipal {
  userId: string;
  accountId: string;
  role: Role;
  sessionTokenHash: string;
  accessTokenId: null;
}

interface Cached {
  principal: SessionPrincipal;
  expiresAt: number;
}

/** Sessions kept: one entry is a few hundred bytes. */
const MAX_SESSIONS = 10_000;
/**
 * How long an entry is trusted without an event: a bound for changes made to the database without the
 * service (an administrator's SQL), which emit nothing.
 */
const TRUST_MS = 60_000;

function prepareLookup(db: Db) {
  return db
    .select({
      userId: sessions.userId,
      accountId: sessions.accountId,
      expiresAt: sessions.expiresAt,
      role: memberships.role,
    })
    .from(sessions)
    .innerJoin(memberships, and(eq(memberships.accountId, sessions.accountId), eq(memberships.userId, sessions.userId)))
    .where(eq(sessions.tokenHash, sql.placeholder("tokenHash")))
    .prepare("session_by_token_hash");
}

export class SessionCache {
  private readonly cache = new LRUCache<string, Cached>({ max: MAX_SESSIONS, ttl: TRUST_MS });
  private readonly lookup: ReturnType<typeof prepareLookup>;
  /**
   * Counts drops: a lookup that started before a drop does not cache what it read, which may be from
   * before the change.
   */
  private generation = 0;

  constructor(db: Db, events: DomainEvents) {
    this.lookup = prepareLookup(db);
    events.on("sessions.changed", ({ accountId, userId }) => this.dropUser(accountId, userId));
    // Events from other processes may have been missed while the relay reconnected.
    events.on("relay.resynced", () => this.dropAll());
  }

  /** The signed-in principal of a session cookie's value, or null for none, an unknown or an expired one. */
  async resolve(token: string | undefined): Promise<SessionPrincipal | null> {
    if (!token) return null;
    const tokenHash = hashSessionToken(token);
    const cached = this.cache.get(tokenHash);
    if (cached) {
      if (cached.expiresAt > Date.now()) return cached.principal;
      this.cache.delete(tokenHash);
      return null;
    }
    const generation = this.generation;
    const [row] = await this.lookup.execute({ tokenHash });
    if (!row || row.expiresAt.getTime() <= Date.now() || !isRole(row.role)) return null;
    const principal = {
      userId: row.userId,
      accountId: row.accountId,
      role: row.role,
      sessionTokenHash: tokenHash,
      accessTokenId: null,
    };
    if (generation === this.generation) this.cache.set(tokenHash, { principal, expiresAt: row.expiresAt.getTime() });
    return principal;
  }

  private dropUser(accountId: string, userId: string) {
    this.generation++;
    const dropped = [...this.cache.entries()]
      .filter(([, { principal }]) => principal.accountId === accountId && principal.userId === userId)
      .map(([tokenHash]) => tokenHash);
    for (const tokenHash of dropped) this.cache.delete(tokenHash);
  }

  private dropAll() {
    this.generation++;
    this.cache.clear();
  }
}
