import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { preparedQuery, preparedShapes } from "../../platform/db/prepared.ts";
import type { Role } from "../../platform/roles.ts";
import { accounts, emailVerifications, memberships, plans, sessions, subscriptions, users } from "./tables.ts";

export type AccountRow = typeof accounts.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type SubscriptionRow = typeof subscriptions.$inferSelect;
export type PlanRow = typeof plans.$inferSelect;

// Authentication comes before any account is known, so this looks users up by email (and sessions.ts
// sessions by their token).
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
  return row;
}

export async function insertSession(db: Executor, row: typeof sessions.$inferInsert) {
  await db.insert(sessions).values(row);
}

export async function deleteSession(db: Executor, tokenHash: string) {
  await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
}

/** Sessions of a user other than the one in use, ended when the password changes. */
export async function deleteOtherSessions(db: Executor, accountId: string, userId: string, keepTokenHash: string) {
  await db
    .delete(sessions)
    .where(
      and(
        eq(sessions.accountId, accountId),
        eq(sessions.userId, userId),
        sql`${sessions.tokenHash} <> ${keepTokenHash}`,
      ),
    );
}

export async function firstMembership(db: Executor, userId: string) {
  const [row] = await db
    .select()
    .from(memberships)
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt))
    .limit(1);
  return row;
}

export async function insertUser(db: Executor, row: typeof users.$inferInsert): Promise<UserRow> {
  const [user] = await db.insert(users).values(row).returning();
  return user;
}

export async function insertAccount(db: Executor, row: typeof accounts.$inferInsert): Promise<AccountRow> {
  const [account] = await db.insert(accounts).values(row).returning();
  return account;
}

export async function insertMembership(db: Executor, accountId: string, userId: string, role: Role) {
  await db.insert(memberships).values({ accountId, userId, role });
}

const accountQuery = preparedQuery("account_by_id", (db, name) =>
  db
    .select()
    .from(accounts)
    .where(eq(accounts.id, sql.placeholder("accountId")))
    .prepare(name),
);

export async function getAccount(db: Executor, accountId: string): Promise<AccountRow | undefined> {
  const [row] = await accountQuery(db).execute({ accountId });
  return row;
}

const memberQuery = preparedQuery("member_of_account", (db, name) =>
  db
    .select({ user: users, role: memberships.role, joinedAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(
      and(eq(memberships.accountId, sql.placeholder("accountId")), eq(memberships.userId, sql.placeholder("userId"))),
    )
    .prepare(name),
);

export async function getMember(db: Executor, accountId: string, userId: string) {
  const [row] = await memberQuery(db).execute({ accountId, userId });
  return row;
}

const viewerQuery = preparedQuery("viewer_of_member", (db, name) =>
  db
    .select({
      account: accounts,
      user: users,
      role: memberships.role,
      joinedAt: memberships.createdAt,
      subscription: subscriptions,
      plan: plans,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .innerJoin(accounts, eq(accounts.id, memberships.accountId))
    .innerJoin(subscriptions, eq(subscriptions.accountId, memberships.accountId))
    .innerJoin(plans, eq(plans.id, subscriptions.planId))
    .where(
      and(eq(memberships.accountId, sql.placeholder("accountId")), eq(memberships.userId, sql.placeholder("userId"))),
    )
    .prepare(name),
);

/**
 * A member's account, user, role and subscription with its plan, in one statement: read on every
 * request that asks for the viewer, where three round trips cost more than the rest of the request.
 */
export async function getViewerRows(db: Executor, accountId: string, userId: string) {
  const [row] = await viewerQuery(db).execute({ accountId, userId });
  return row;
}

export async function listMembers(db: Executor, accountId: string) {
  return db
    .select({ user: users, role: memberships.role, joinedAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.accountId, accountId))
    .orderBy(asc(memberships.createdAt), asc(users.email));
}

export async function updateMemberRole(db: Executor, accountId: string, userId: string, role: Role) {
  await db
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)));
}

export async function updateUser(
  db: Executor,
  accountId: string,
  userId: string,
  set: Partial<typeof users.$inferInsert>,
) {
  // The membership check keeps a user of another account out of reach.
  const member = await getMember(db, accountId, userId);
  if (!member) return;
  await db.update(users).set(set).where(eq(users.id, userId));
}

export async function updateAccountRow(db: Executor, accountId: string, set: Partial<typeof accounts.$inferInsert>) {
  await db.update(accounts).set(set).where(eq(accounts.id, accountId));
}

const subscriptionQuery = preparedShapes("subscription_of_account", (db, name, shape: "read" | "lock") => {
  const query = db
    .select({ subscription: subscriptions, plan: plans })
    .from(subscriptions)
    .innerJoin(plans, eq(plans.id, subscriptions.planId))
    .where(eq(subscriptions.accountId, sql.placeholder("accountId")));
  return (shape === "lock" ? query.for("update", { of: subscriptions }) : query).prepare(name);
});

export async function getSubscription(db: Executor, accountId: string, lock = false) {
  const [row] = await subscriptionQuery(db, lock ? "lock" : "read").execute({ accountId });
  return row;
}

export async function updateSubscriptionRow(
  db: Executor,
  accountId: string,
  set: Partial<Omit<typeof subscriptions.$inferInsert, "id" | "accountId">>,
) {
  await db.update(subscriptions).set(set).where(eq(subscriptions.accountId, accountId));
}

/**
 * Up to `limit` subscriptions whose period ended by `now`, the longest ended first, locked for update; rows
 * another transaction holds are skipped (another process is closing them).
 */
export async function lockDueSubscriptions(db: Executor, now: Date, limit: number) {
  return db
    .select({ subscription: subscriptions, plan: plans })
    .from(subscriptions)
    .innerJoin(plans, eq(plans.id, subscriptions.planId))
    .where(lte(subscriptions.currentPeriodEnd, now))
    .orderBy(asc(subscriptions.currentPeriodEnd))
    .limit(limit)
    .for("update", { of: subscriptions, skipLocked: true });
}

/** Each account's subscription period moved to [start, end), in one statement. */
export async function movePeriods(db: Executor, periods: readonly { accountId: string; start: Date; end: Date }[]) {
  if (periods.length === 0) return;
  await db.execute(sql`
    update subscriptions s set current_period_start = p.start_at, current_period_end = p.end_at
    from unnest(${sql.param(periods.map((p) => p.accountId))}::uuid[], ${sql.param(periods.map((p) => p.start.toISOString()))}::timestamptz[],
      ${sql.param(periods.map((p) => p.end.toISOString()))}::timestamptz[]) as p(account_id, start_at, end_at)
    where s.account_id = p.account_id`);
}

/** The free trials' ends of the accounts named (an account without one is absent). */
export async function trialEndsOf(db: Executor, accountIds: readonly string[]) {
  if (accountIds.length === 0) return new Map<string, Date>();
  const rows = await db
    .select({ id: accounts.id, freeTrialEndsAt: accounts.freeTrialEndsAt })
    .from(accounts)
    .where(inArray(accounts.id, [...accountIds]));
  return new Map(rows.flatMap((r) => (r.freeTrialEndsAt ? [[r.id, r.freeTrialEndsAt] as const] : [])));
}

export async function insertSubscription(db: Executor, row: typeof subscriptions.$inferInsert) {
  await db.insert(subscriptions).values(row);
}

export async function listPlans(db: Executor): Promise<PlanRow[]> {
  return db.select().from(plans).orderBy(asc(plans.priceCents));
}

export async function upsertPlans(db: Executor, rows: (typeof plans.$inferInsert)[]) {
  for (const row of rows) {
    await db.insert(plans).values(row).onConflictDoUpdate({ target: plans.id, set: row });
  }
}

/** Replaces the user's verification link (older links stop working); the user is the caller's own. */
export async function replaceEmailVerification(
  db: Executor,
  accountId: string,
  userId: string,
  row: { tokenHash: string; expiresAt: Date },
) {
  const [member] = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)));
  if (!member) return false;
  await db
    .insert(emailVerifications)
    .values({ userId, ...row })
    .onConflictDoUpdate({ target: emailVerifications.userId, set: { ...row, createdAt: new Date() } });
  return true;
}

// A verification link is opened before any account is known (signed out, or signed in as someone
// else), so this takes the link by its token, as sessions are found by theirs. Taken means deleted:
// a link works once, also when opened twice at the same moment.
export async function takeEmailVerification(db: Executor, tokenHash: string) {
  const [row] = await db
    .delete(emailVerifications)
    .where(eq(emailVerifications.tokenHash, tokenHash))
    .returning({ userId: emailVerifications.userId, expiresAt: emailVerifications.expiresAt });
  return row;
}

/** Marks the user of a taken verification link verified; its e-mail address is what the link proved. */
export async function markUserVerified(db: Executor, userId: string) {
  const [row] = await db
    .update(users)
    .set({ isVerified: true })
    .where(eq(users.id, userId))
    .returning({ email: users.email });
  return row;
}
