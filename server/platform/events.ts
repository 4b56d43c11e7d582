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
