// What the viewer query reads of a member (account, user, role, subscription and plan), kept in the
// process: the console asks for the viewer beside most screens' data, and one database round trip was
// most of such a request. Every change the service makes to those rows emits "viewer.changed" or
// "sessions.changed", which the events relay carries to every other process; each drops what it kept.
// Feature flags are not read from here (operators set them in SQL): see resolvers.ts.
import { LRUCache } from "lru-cache";
import type { Db } from "../../platform/db/index.ts";
import type { DomainEvents } from "../../platform/events.ts";
import * as service from "./service.ts";

type ViewerRows = Awaited<ReturnType<typeof service.viewerOf>>;

/** Members kept: an entry is a few kilobytes. */
const MAX_MEMBERS = 10_000;
/**
 * How long an entry is trusted without an event: a bound for changes made to the database without the
 * service (an administrator's SQL), which emit nothing. As the session cache's.
 */
const TRUST_MS = 60_000;

const keyOf = (accountId: string, userId: string) => `${accountId}:${userId}`;

export class ViewerModel {
  private readonly cache = new LRUCache<string, ViewerRows>({ max: MAX_MEMBERS, ttl: TRUST_MS });
  /** Counts drops: a read that started before a drop does not keep what it read, which may be from before the change. */
  private generation = 0;

  constructor(events: DomainEvents) {
    events.on("sessions.changed", ({ accountId, userId }) => this.drop((a, u) => a === accountId && u === userId));
    events.on("viewer.changed", ({ accountId, userId }) =>
      this.drop((a, u) => (accountId !== null && a === accountId) || (userId !== null && u === userId)),
    );
    events.on("viewers.changed", ({ accountIds }) => {
      const changed = new Set(accountIds);
      this.drop((a) => changed.has(a));
    });
    // Events from other processes may have been missed while the relay reconnected.
    events.on("relay.resynced", () => this.drop(() => true));
  }

  async rows(db: Db, principal: { accountId: string; userId: string }): Promise<ViewerRows> {
    const key = keyOf(principal.accountId, principal.userId);
    const kept = this.cache.get(key);
    if (kept) return kept;
    const generation = this.generation;
    const rows = await service.viewerOf(db, principal);
    if (generation === this.generation) this.cache.set(key, rows);
    return rows;
  }

  private drop(matches: (accountId: string, userId: string) => boolean) {
    this.generation += 1;
    for (const key of this.cache.keys()) {
      const [accountId, userId] = key.split(":");
      if (matches(accountId, userId)) this.cache.delete(key);
    }
  }
}
