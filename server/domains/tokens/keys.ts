// Who an x-api-key belongs to, read on every call that carries one: kept in the process like sessions
// (account/sessions.ts), so a call with a known key costs no database round trip. Revoking a key or
// changing its limits emits "accessTokens.changed", which the events relay carries to every process; each
// drops that key at once. Every refusal of a key that is not usable says the same, so a caller learns
// nothing of whether a key exists.
import type { Redis } from "ioredis";
import { LRUCache } from "lru-cache";
import type { Logger } from "pino";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import type { AccessTokenApplication } from "../../../schemas/generated/entities.ts";
import { retryAfterSeconds } from "../../dataplane/proxy/admission.ts";
import { consumed, countingLimiter } from "../../dataplane/ratelimit/stage.ts";
import { type AppConfig, persistentSecret } from "../../platform/config.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isRole, type Role } from "../../platform/roles.ts";
import { KEY_PATTERN, type KeyHasher, keyHasher } from "./service.ts";
import * as store from "./store.ts";

export type Application = AccessTokenApplication;

/** The header a call carries its API key in. */
export const API_KEY_HEADER = "x-api-key";

/** The caller a key names: its creator, acting in its account with the key's role. */
export interface KeyPrincipal {
  userId: string;
  accountId: string;
  role: Role;
  sessionTokenHash: null;
  accessTokenId: string;
}

/** A refusal of a key: its code is the API's; `retryAfter` (seconds) when a limit refused it. */
export class KeyRefusal extends AppError {
  constructor(
    override readonly code: "UNAUTHENTICATED" | "FORBIDDEN" | "RATE_LIMITED",
    message: string,
    readonly retryAfter?: number,
  ) {
    super(code, message);
  }
}

const notValid = () => new KeyRefusal("UNAUTHENTICATED", "The API key is not valid.");

interface CachedKey {
  principal: KeyPrincipal;
  applications: ReadonlySet<string>;
  ipRps: number | null;
  ipRpm: number | null;
  /** When this process last recorded the key's use (ms). */
  usedAt: number;
}

/** Keys kept: one entry is a few hundred bytes. */
const MAX_KEYS = 10_000;
/** How long an entry is trusted without an event: a bound for changes made to the database without the service. */
const TRUST_MS = 60_000;
/** How often a key's lastUsedAt is written, at most, per process. */
export const LAST_USED_EVERY_MS = 60_000;

/**
 * The per-client-IP limits of keys, counted as the proxy counts its limits (countingLimiter): in Redis
 * when the service has one, so every process counts together.
 */
export class KeyIpLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(private readonly redis?: Redis) {}

  /**
   * Counts this call against the key's limits for `clientIp`: the seconds to wait when it goes over one
   * (undefined when it may pass), and the quota of the window nearest its end (the RateLimit-* headers).
   */
  async check(
    tokenId: string,
    clientIp: string,
    rps: number | null,
    rpm: number | null,
  ): Promise<{ wait: number | undefined; quota: KeyQuota | undefined }> {
    const windows = [
      [rps, 1],
      [rpm, 60],
    ] as const;
    let waitMs: number | undefined;
    let quota: KeyQuota | undefined;
    for (const [limit, seconds] of windows) {
      if (limit === null) continue;
      const count = await consumed(this.limiterFor(limit, seconds), `${tokenId}:${clientIp}`, 1);
      if (!count) continue;
      if (count.consumed > limit) waitMs = Math.max(waitMs ?? 0, count.msBeforeNext);
      const remaining = Math.max(0, limit - count.consumed);
      if (!quota || remaining < quota.remaining)
        quota = { limit, remaining, resetSeconds: Math.max(0, Math.ceil(count.msBeforeNext / 1000)) };
    }
    return { wait: waitMs === undefined ? undefined : retryAfterSeconds(waitMs), quota };
  }

  private limiterFor(limit: number, seconds: number): RateLimiterAbstract {
    const id = `${limit}/${seconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = countingLimiter({ limit, seconds, keyPrefix: `np:key:${seconds}`, redis: this.redis });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

/** What is left of a key's tightest per-client-IP window after a call. */
export interface KeyQuota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export class AccessKeys {
  private readonly cache = new LRUCache<string, CachedKey>({ max: MAX_KEYS, ttl: TRUST_MS });
  /** Counts drops: a lookup that started before a drop does not cache what it read. */
  private generation = 0;

  constructor(
    private readonly db: Db,
    events: DomainEvents,
    private readonly hash: KeyHasher,
    private readonly limits: KeyIpLimits,
    private readonly warn: (message: string, error: unknown) => void,
  ) {
    events.on("accessTokens.changed", ({ tokenId }) => this.dropToken(tokenId));
    // Events from other processes may have been missed while the relay reconnected.
    events.on("relay.resynced", () => this.dropAll());
  }

  /**
   * The caller of a call carrying `key` (the x-api-key header) for `application`, from `clientIp`; refused
   * with 401 for a key that is not usable (malformed, unknown, revoked: the same words), 403 for one not
   * accepted by this application, 429 past its limits per client IP.
   */
  async authenticate(key: unknown, application: Application, clientIp: string): Promise<KeyPrincipal> {
    return (await this.authorize(key, application, clientIp)).principal;
  }

  /** The same, with what is left of the key's per-client-IP quota when it has limits (REST's RateLimit-*). */
  async authorize(
    key: unknown,
    application: Application,
    clientIp: string,
  ): Promise<{ principal: KeyPrincipal; quota: KeyQuota | undefined }> {
    if (typeof key !== "string" || !KEY_PATTERN.test(key)) throw notValid();
    // A key seen before is answered without waiting (the common case: no promise to settle).
    const keyHash = this.hash(key);
    const entry = this.cached(keyHash) ?? (await this.lookUp(keyHash));
    if (!entry) throw notValid();
    if (!entry.applications.has(application))
      throw new KeyRefusal("FORBIDDEN", "This API key is not accepted by this API: it was not made for it.");
    if (entry.ipRps === null && entry.ipRpm === null) return { principal: entry.principal, quota: undefined };
    const { wait, quota } = await this.limits.check(entry.principal.accessTokenId, clientIp, entry.ipRps, entry.ipRpm);
    if (wait !== undefined)
      throw new KeyRefusal(
        "RATE_LIMITED",
        `Rate limited: this API key's limit per client IP. Retry in ${wait} s.`,
        wait,
      );
    return { principal: entry.principal, quota };
  }

  /** The key's entry when this process has it, its use recorded at most once a minute (in the background). */
  private cached(keyHash: string): CachedKey | undefined {
    const cached = this.cache.get(keyHash);
    if (cached) {
      const now = Date.now();
      if (now - cached.usedAt >= LAST_USED_EVERY_MS) {
        cached.usedAt = now;
        const { accountId, accessTokenId } = cached.principal;
        store
          .touchAccessToken(this.db, accountId, accessTokenId, new Date(now - LAST_USED_EVERY_MS))
          .catch((error) => this.warn("could not record an API key's use", error));
      }
    }
    return cached;
  }

  /** The key read from the database (its use recorded by the same statement), kept for TRUST_MS. */
  private async lookUp(keyHash: string): Promise<CachedKey | undefined> {
    const generation = this.generation;
    const row = await store.activeTokenMarkedUsed(this.db, keyHash);
    if (!row || !isRole(row.role)) return undefined;
    const entry: CachedKey = {
      principal: {
        userId: row.createdBy,
        accountId: row.accountId,
        role: row.role,
        sessionTokenHash: null,
        accessTokenId: row.id,
      },
      applications: new Set(row.applications),
      ipRps: row.ipRps,
      ipRpm: row.ipRpm,
      usedAt: Date.now(),
    };
    if (generation === this.generation) this.cache.set(keyHash, entry);
    return entry;
  }

  private dropToken(tokenId: string) {
    this.generation++;
    const dropped = [...this.cache.entries()]
      .filter(([, entry]) => entry.principal.accessTokenId === tokenId)
      .map(([keyHash]) => keyHash);
    for (const keyHash of dropped) this.cache.delete(keyHash);
  }

  private dropAll() {
    this.generation++;
    this.cache.clear();
  }
}

/**
 * The API's key checker for this process: hashing with the configured access-token key (or the one
 * generated into the data directory), limits counted in Redis when the service has one. `close` ends
 * that connection.
 */
export async function startAccessKeys(
  db: Db,
  events: DomainEvents,
  config: Pick<AppConfig, "accessTokenKey" | "redisUrl" | "dataDir">,
  log: Logger,
): Promise<{ keys: AccessKeys; hash: KeyHasher; close(): void }> {
  const hash = keyHasher(config.accessTokenKey ?? persistentSecret(config as AppConfig, "access-token-key", 32).value);
  // ioredis loads only when Redis is configured, as for the proxy's limits (metering/stages.ts).
  const redis = config.redisUrl
    ? new (await import("ioredis")).Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : undefined;
  redis?.on("error", (error) => log.warn({ err: error }, "API key limits: Redis error (limiting in memory meanwhile)"));
  const keys = new AccessKeys(db, events, hash, new KeyIpLimits(redis), (message, error) =>
    log.warn({ err: error }, message),
  );
  return { keys, hash, close: () => redis?.disconnect() };
}
