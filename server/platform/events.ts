import { EventEmitter } from "node:events";

export interface DomainEventMap {
  /** An endpoint's status, label, tags or settings changed; caches of it must be refreshed. */
  "endpoint.changed": { accountId: string; endpointId: string };
  /**
   * Endpoints of an account changed in a way no "endpoint.changed" names (a tag deleted from every
   * endpoint at once): lists of them are read again.
   */
  "endpoints.listChanged": { accountId: string };
  /** An endpoint's rate limiters, rates or overrides changed; the rate-limit stage reloads that endpoint. */
  "ratelimits.changed": { accountId: string; endpointId: string };
  /**
   * A user's sessions or role in an account changed (sign-out, password change, role change): what a
   * process cached of that user's sessions in that account is dropped.
   */
  "sessions.changed": { accountId: string; userId: string };
  /**
   * What the viewer query shows of an account (its row, subscription or plan: accountId) or of a user
   * (name, verification: userId) changed; the viewer model drops those members. Whatever changes an
   * account's subscription (billing) emits it too.
   */
  "viewer.changed": { accountId: string | null; userId: string | null };
  /**
   * viewer.changed for many accounts at once (the billing clock's batch of closed periods): one message
   * to the other processes instead of one per account. At most VIEWERS_PER_EVENT ids, so the relayed
   * message fits PostgreSQL's 8,000-byte notification.
   */
  "viewers.changed": { accountIds: string[] };
  /**
   * An access token was revoked or its limits changed: what a process cached of it is dropped, so the
   * next call with it is checked against the database.
   */
  "accessTokens.changed": { accountId: string; tokenId: string };
  /**
   * The events relay listens again after losing its connection: events from other processes may have
   * been missed, so caches built from them reload whole. Local only, never relayed.
   */
  "relay.resynced": Record<string, never>;
}

/** The most account ids one viewers.changed carries (37 bytes each, with the envelope, under 8,000 bytes). */
export const VIEWERS_PER_EVENT = 150;

/** In-process notifications between domains and the data plane. */
export class DomainEvents {
  private readonly emitter = new EventEmitter();

  emit<K extends keyof DomainEventMap>(name: K, payload: DomainEventMap[K]) {
    this.emitter.emit(name, payload);
  }

  /**
   * Emits and waits for the listeners that return a promise: the events relay's is settled once the
   * event is published to every other process, so a change that must not be seen stale anywhere (a
   * sign-out) answers only after that.
   */
  async emitAndWait<K extends keyof DomainEventMap>(name: K, payload: DomainEventMap[K]) {
    await Promise.all(this.emitter.listeners(name).map((listener) => listener(payload)));
  }

  on<K extends keyof DomainEventMap>(name: K, listener: (payload: DomainEventMap[K]) => void | Promise<void>) {
    this.emitter.on(name, listener);
    return () => this.emitter.off(name, listener);
  }
}
