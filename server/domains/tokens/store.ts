import { and, arrayContains, count, desc, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { isUuid } from "../../platform/ids.ts";
import { accessTokens } from "./tables.ts";

export type AccessTokenRow = typeof accessTokens.$inferSelect;
export type NewAccessToken = Omit<typeof accessTokens.$inferInsert, "id" | "accountId" | "createdAt">;

export async function insertAccessToken(
  db: Executor,
  accountId: string,
  values: NewAccessToken,
): Promise<AccessTokenRow> {
  const [row] = await db
    .insert(accessTokens)
    .values({ ...values, accountId })
    .returning();
  return row;
}

/** The account's access tokens, newest first; those accepted for `application` only, when given. */
export async function listAccessTokens(
  db: Executor,
  accountId: string,
  application?: string,
): Promise<AccessTokenRow[]> {
  return db
    .select()
    .from(accessTokens)
    .where(
      and(
        eq(accessTokens.accountId, accountId),
        application ? arrayContains(accessTokens.applications, [application]) : undefined,
      ),
    )
    .orderBy(desc(accessTokens.createdAt), desc(accessTokens.id));
}

/** Holds the account's token creations to one at a time until the transaction ends. */
export async function lockAccountTokens(db: Executor, accountId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext('access_tokens:' || ${accountId}))`);
}

export async function countActiveAccessTokens(db: Executor, accountId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(accessTokens)
    .where(and(eq(accessTokens.accountId, accountId), isNull(accessTokens.revokedAt)));
  return row.n;
}

export async function getAccessToken(db: Executor, accountId: string, id: string): Promise<AccessTokenRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(accessTokens)
    .where(and(eq(accessTokens.accountId, accountId), eq(accessTokens.id, id)));
  return row;
}

/** Revokes the account's token (a revoked one keeps its first revocation time); undefined when it has none. */
export async function revokeAccessToken(
  db: Executor,
  accountId: string,
  id: string,
): Promise<AccessTokenRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .update(accessTokens)
    .set({ revokedAt: sql`coalesce(${accessTokens.revokedAt}, now())` })
    .where(and(eq(accessTokens.accountId, accountId), eq(accessTokens.id, id)))
    .returning();
  return row;
}

export async function updateIpRateLimit(
  db: Executor,
  accountId: string,
  id: string,
  limits: { ipRps: number | null; ipRpm: number | null },
): Promise<AccessTokenRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .update(accessTokens)
    .set(limits)
    .where(and(eq(accessTokens.accountId, accountId), eq(accessTokens.id, id)))
    .returning();
  return row;
}

/**
 * The active token a key's hash names, marked used now, in one round trip. The key is what names the
 * account here: whoever sends it, the token's own account is the one it acts in.
 */
export async function activeTokenMarkedUsed(db: Executor, keyHash: string): Promise<AccessTokenRow | undefined> {
  const [row] = await db
    .update(accessTokens)
    .set({ lastUsedAt: sql`now()` })
    .where(and(eq(accessTokens.keyHash, keyHash), isNull(accessTokens.revokedAt)))
    .returning();
  return row;
}

/** Marks a token used now, unless it was marked since `since` (another process did). */
export async function touchAccessToken(db: Executor, accountId: string, id: string, since: Date): Promise<void> {
  await db
    .update(accessTokens)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(accessTokens.accountId, accountId),
        eq(accessTokens.id, id),
        or(isNull(accessTokens.lastUsedAt), lt(accessTokens.lastUsedAt, since)),
      ),
    );
}
