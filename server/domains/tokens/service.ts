import { createHmac, randomBytes } from "node:crypto";
import type { AccessTokenCreateInput, AccessTokenIpRateLimitInput } from "../../../schemas/generated/entities.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError, foundOr } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import * as store from "./store.ts";

export type AccessTokenRow = store.AccessTokenRow;

/** Active tokens one account may hold. */
export const ACCESS_TOKENS_PER_ACCOUNT = 50;

/**
 * A key: `np_`, a public part (12 hex digits, kept readable as the prefix) and `_`, then 32 random bytes
 * in base64url (256 bits: no guessing, so one fast keyed hash protects it at rest).
 */
export const KEY_PATTERN = /^np_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;
const PREFIX_LENGTH = "np_".length + 12;

/** How a key is hashed for storage and lookup: HMAC-SHA-256 with the service's access-token key. */
export type KeyHasher = (key: string) => string;

export function keyHasher(secret: string): KeyHasher {
  return (key) => createHmac("sha256", secret).update(key).digest("hex");
}

function newKey(): { key: string; prefix: string } {
  const key = `np_${randomBytes(6).toString("hex")}_${randomBytes(32).toString("base64url")}`;
  return { key, prefix: key.slice(0, PREFIX_LENGTH) };
}

export const listAccessTokens = (db: Db, accountId: string, application?: string) =>
  store.listAccessTokens(db, accountId, application);

/** A new token of the account, made by `userId`; the key is returned here and never again. */
export async function createAccessToken(
  db: Db,
  hash: KeyHasher,
  accountId: string,
  userId: string,
  input: AccessTokenCreateInput,
): Promise<{ row: AccessTokenRow; key: string }> {
  return db.transaction(async (tx) => {
    // One creation at a time per account, so two at once cannot both pass the count.
    await store.lockAccountTokens(tx, accountId);
    if ((await store.countActiveAccessTokens(tx, accountId)) >= ACCESS_TOKENS_PER_ACCOUNT)
      throw new AppError(
        "CONFLICT",
        `An account may have ${ACCESS_TOKENS_PER_ACCOUNT} active API keys: revoke one you no longer use first.`,
      );
    const { key, prefix } = newKey();
    const row = await store.insertAccessToken(tx, accountId, {
      name: input.name.trim(),
      role: input.role,
      applications: input.applications,
      prefix,
      keyHash: hash(key),
      createdBy: userId,
    });
    return { row, key };
  });
}

/** Revokes a token; every process refuses it once this returns (the relay has published the change). */
export async function revokeAccessToken(db: Db, events: DomainEvents, accountId: string, id: string) {
  const row = foundOr(await store.revokeAccessToken(db, accountId, id), "The API key");
  await events.emitAndWait("accessTokens.changed", { accountId, tokenId: id });
  return row;
}

/** Sets a token's limits per client IP (null: none); in force in every process once this returns. */
export async function updateIpRateLimit(
  db: Db,
  events: DomainEvents,
  accountId: string,
  id: string,
  input: AccessTokenIpRateLimitInput,
) {
  const row = foundOr(
    await store.updateIpRateLimit(db, accountId, id, { ipRps: input.rps ?? null, ipRpm: input.rpm ?? null }),
    "The API key",
  );
  await events.emitAndWait("accessTokens.changed", { accountId, tokenId: id });
  return row;
}
