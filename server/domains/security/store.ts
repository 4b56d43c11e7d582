import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import {
  endpointDisabledMethods,
  endpointJwts,
  endpointSecurity,
  endpointSecurityEntries,
  endpointTokens,
} from "./tables.ts";

export type SecurityRow = typeof endpointSecurity.$inferSelect;
export type TokenRow = typeof endpointTokens.$inferSelect;
export type JwtRow = typeof endpointJwts.$inferSelect;
export type EntryRow = typeof endpointSecurityEntries.$inferSelect;
export type EntryKind = "REFERRER" | "IP" | "DOMAIN_MASK" | "REQUEST_FILTER";
export type OptionColumns = Omit<SecurityRow, "endpointId" | "accountId" | "updatedAt">;

export async function getSecurity(
  db: Executor,
  accountId: string,
  endpointId: string,
): Promise<SecurityRow | undefined> {
  const [row] = await securityOf(db, accountId, [endpointId]);
  return row;
}

/** The option rows of several endpoints (an endpoint without one has none). */
export async function securityOf(db: Executor, accountId: string, endpointIds: string[]): Promise<SecurityRow[]> {
  return db
    .select()
    .from(endpointSecurity)
    .where(and(eq(endpointSecurity.accountId, accountId), inArray(endpointSecurity.endpointId, endpointIds)));
}

export async function upsertSecurity(
  db: Executor,
  accountId: string,
  endpointId: string,
  patch: Partial<OptionColumns>,
): Promise<SecurityRow> {
  const [row] = await db
    .insert(endpointSecurity)
    .values({ accountId, endpointId, ...patch })
    .onConflictDoUpdate({
      target: endpointSecurity.endpointId,
      set: { ...patch, updatedAt: new Date() },
      where: eq(endpointSecurity.accountId, accountId),
    })
    .returning();
  return row;
}

export async function listTokens(db: Executor, accountId: string, endpointId: string): Promise<TokenRow[]> {
  return tokensOf(db, accountId, [endpointId]);
}

export async function tokensOf(db: Executor, accountId: string, endpointIds: string[]): Promise<TokenRow[]> {
  return db
    .select()
    .from(endpointTokens)
    .where(and(eq(endpointTokens.accountId, accountId), inArray(endpointTokens.endpointId, endpointIds)))
    .orderBy(asc(endpointTokens.createdAt), asc(endpointTokens.id));
}

export async function countTokens(db: Executor, accountId: string, endpointId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(endpointTokens)
    .where(and(eq(endpointTokens.accountId, accountId), eq(endpointTokens.endpointId, endpointId)));
  return row.n;
}

export async function insertToken(
  db: Executor,
  accountId: string,
  endpointId: string,
  values: { tokenHash: string; tokenPrefix: string },
): Promise<TokenRow> {
  const [row] = await db
    .insert(endpointTokens)
    .values({ accountId, endpointId, ...values })
    .returning();
  return row;
}

export async function deleteToken(
  db: Executor,
  accountId: string,
  endpointId: string,
  tokenId: string,
): Promise<TokenRow | undefined> {
  const [row] = await db
    .delete(endpointTokens)
    .where(
      and(
        eq(endpointTokens.accountId, accountId),
        eq(endpointTokens.endpointId, endpointId),
        eq(endpointTokens.id, tokenId),
      ),
    )
    .returning();
  return row;
}

export async function listJwts(db: Executor, accountId: string, endpointId: string): Promise<JwtRow[]> {
  return jwtsOf(db, accountId, [endpointId]);
}

export async function jwtsOf(db: Executor, accountId: string, endpointIds: string[]): Promise<JwtRow[]> {
  return db
    .select()
    .from(endpointJwts)
    .where(and(eq(endpointJwts.accountId, accountId), inArray(endpointJwts.endpointId, endpointIds)))
    .orderBy(asc(endpointJwts.createdAt), asc(endpointJwts.id));
}

export async function countJwts(db: Executor, accountId: string, endpointId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(endpointJwts)
    .where(and(eq(endpointJwts.accountId, accountId), eq(endpointJwts.endpointId, endpointId)));
  return row.n;
}

export async function insertJwt(
  db: Executor,
  accountId: string,
  endpointId: string,
  values: { name: string; kid: string; publicKey: string; fingerprint: string },
): Promise<JwtRow | undefined> {
  const rows = await db
    .insert(endpointJwts)
    .values({ accountId, endpointId, ...values })
    .onConflictDoNothing()
    .returning();
  return rows[0];
}

export async function deleteJwt(
  db: Executor,
  accountId: string,
  endpointId: string,
  jwtId: string,
): Promise<JwtRow | undefined> {
  const [row] = await db
    .delete(endpointJwts)
    .where(
      and(eq(endpointJwts.accountId, accountId), eq(endpointJwts.endpointId, endpointId), eq(endpointJwts.id, jwtId)),
    )
    .returning();
  return row;
}

export async function listEntries(db: Executor, accountId: string, endpointId: string): Promise<EntryRow[]> {
  return entriesOf(db, accountId, [endpointId]);
}

export async function entriesOf(db: Executor, accountId: string, endpointIds: string[]): Promise<EntryRow[]> {
  return db
    .select()
    .from(endpointSecurityEntries)
    .where(
      and(eq(endpointSecurityEntries.accountId, accountId), inArray(endpointSecurityEntries.endpointId, endpointIds)),
    )
    .orderBy(asc(endpointSecurityEntries.createdAt), asc(endpointSecurityEntries.id));
}

export async function countEntries(
  db: Executor,
  accountId: string,
  endpointId: string,
  kind: EntryKind,
): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(endpointSecurityEntries)
    .where(
      and(
        eq(endpointSecurityEntries.accountId, accountId),
        eq(endpointSecurityEntries.endpointId, endpointId),
        eq(endpointSecurityEntries.kind, kind),
      ),
    );
  return row.n;
}

/** Inserts an entry; undefined when the same value is already there (or, for a host, on any endpoint). */
export async function insertEntry(
  db: Executor,
  accountId: string,
  endpointId: string,
  kind: EntryKind,
  value: string,
): Promise<EntryRow | undefined> {
  const rows = await db
    .insert(endpointSecurityEntries)
    .values({ accountId, endpointId, kind, value })
    .onConflictDoNothing()
    .returning();
  return rows[0];
}

export async function deleteEntry(
  db: Executor,
  accountId: string,
  kind: EntryKind,
  id: string,
): Promise<EntryRow | undefined> {
  const [row] = await db
    .delete(endpointSecurityEntries)
    .where(
      and(
        eq(endpointSecurityEntries.accountId, accountId),
        eq(endpointSecurityEntries.kind, kind),
        eq(endpointSecurityEntries.id, id),
      ),
    )
    .returning();
  return row;
}

export async function listDisabledMethods(db: Executor, accountId: string, endpointId: string): Promise<string[]> {
  return (await disabledMethodsOf(db, accountId, [endpointId])).map((r) => r.method);
}

export async function disabledMethodsOf(db: Executor, accountId: string, endpointIds: string[]) {
  return db
    .select({ endpointId: endpointDisabledMethods.endpointId, method: endpointDisabledMethods.method })
    .from(endpointDisabledMethods)
    .where(
      and(eq(endpointDisabledMethods.accountId, accountId), inArray(endpointDisabledMethods.endpointId, endpointIds)),
    );
}

/** Flips one method: returns true when it is now disabled. */
export async function toggleDisabledMethod(
  db: Executor,
  accountId: string,
  endpointId: string,
  method: string,
): Promise<boolean> {
  const removed = await db
    .delete(endpointDisabledMethods)
    .where(
      and(
        eq(endpointDisabledMethods.accountId, accountId),
        eq(endpointDisabledMethods.endpointId, endpointId),
        eq(endpointDisabledMethods.method, method),
      ),
    )
    .returning({ method: endpointDisabledMethods.method });
  if (removed.length > 0) return false;
  await db.insert(endpointDisabledMethods).values({ accountId, endpointId, method }).onConflictDoNothing();
  return true;
}

/** Takes a row lock on the endpoint's security row, creating it, so concurrent list additions count correctly. */
export async function lockSecurity(db: Executor, accountId: string, endpointId: string): Promise<void> {
  await db.insert(endpointSecurity).values({ accountId, endpointId }).onConflictDoNothing();
  await db.execute(
    sql`select 1 from ${endpointSecurity} where ${endpointSecurity.endpointId} = ${endpointId} and ${endpointSecurity.accountId} = ${accountId} for update`,
  );
}
