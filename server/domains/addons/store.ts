import {
  and,
  asc,
  desc,
  eq,
  getTableColumns,
  gt,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  or,
  type SQL,
  sql,
} from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Executor } from "../../platform/db/index.ts";
import { subscriptions } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";
import { addonEvents, addonInstalls, addonPlanChanges } from "./tables.ts";

export type InstallRow = typeof addonInstalls.$inferSelect;
/** An install as written: `createdAt` is when it was made by the service's clock (the database's when absent). */
export type NewInstall = Omit<typeof addonInstalls.$inferInsert, "accountId" | "id" | "endedAt">;
export type PlanChangeRow = typeof addonPlanChanges.$inferSelect;

const live = isNull(addonInstalls.endedAt);

export async function liveInstalls(db: Executor, accountId: string): Promise<InstallRow[]> {
  return db
    .select()
    .from(addonInstalls)
    .where(and(eq(addonInstalls.accountId, accountId), live))
    .orderBy(desc(addonInstalls.createdAt));
}

export async function liveInstallsOnEndpoints(
  db: Executor,
  accountId: string,
  endpointIds: readonly string[],
): Promise<InstallRow[]> {
  if (endpointIds.length === 0) return [];
  return db
    .select()
    .from(addonInstalls)
    .where(and(eq(addonInstalls.accountId, accountId), inArray(addonInstalls.endpointId, [...endpointIds]), live))
    .orderBy(addonInstalls.createdAt);
}

export async function liveInstall(db: Executor, accountId: string, id: string): Promise<InstallRow | undefined> {
  const [row] = await db
    .select()
    .from(addonInstalls)
    .where(and(eq(addonInstalls.accountId, accountId), eq(addonInstalls.id, id), live));
  return row;
}

/** Locks the install's row for a state transition, so two transitions of one install run one after another. */
export async function lockLiveInstall(db: Executor, accountId: string, id: string): Promise<InstallRow | undefined> {
  const [row] = await db
    .select()
    .from(addonInstalls)
    .where(and(eq(addonInstalls.accountId, accountId), eq(addonInstalls.id, id), live))
    .for("update");
  return row;
}

/** Inserts an install; undefined when the add-on is already live there (the partial unique indexes). */
export async function insertInstall(
  db: Executor,
  accountId: string,
  values: NewInstall,
): Promise<InstallRow | undefined> {
  const [row] = await db
    .insert(addonInstalls)
    .values({ ...values, accountId })
    .onConflictDoNothing()
    .returning();
  return row;
}

export async function updateInstall(
  db: Executor,
  accountId: string,
  id: string,
  values: Partial<NewInstall> & { endedAt?: Date | null },
): Promise<InstallRow> {
  const [row] = await db
    .update(addonInstalls)
    .set(values)
    .where(and(eq(addonInstalls.accountId, accountId), eq(addonInstalls.id, id)))
    .returning();
  return row as InstallRow;
}

/** An install live at some time in [start, end): made before its end and not ended by its start. */
const liveIn = (start: Date | SQL | AnyPgColumn, end: Date | SQL) =>
  and(lt(addonInstalls.createdAt, end), or(isNull(addonInstalls.endedAt), gt(addonInstalls.endedAt, start)));

/** What a period's add-on lines are priced from: an install live in it, with its plan changes, oldest first. */
export interface InstallInPeriod {
  install: {
    id: string;
    addonSlug: string;
    planSlug: string;
    interval: string;
    couponCode: string | null;
    createdAt: Date;
    endedAt: Date | null;
    endpointName: string | null;
  };
  changes: { changedAt: Date; fromPlanSlug: string; fromInterval: string }[];
}

/**
 * The account's installs live in [start, end), each with its endpoint's name and its plan changes, as one
 * SQL value (a JSON array, oldest install first) for a statement that reads more beside it;
 * `installsInPeriodOf` turns it into rows.
 */
export const installsInPeriodJson = (accountId: SQL | AnyPgColumn, start: SQL | AnyPgColumn, end: SQL) => sql<
  unknown[]
>`(select coalesce(json_agg(json_build_object(
    'id', ${addonInstalls.id}, 'addonSlug', ${addonInstalls.addonSlug}, 'planSlug', ${addonInstalls.planSlug},
    'interval', ${addonInstalls.interval}, 'couponCode', ${addonInstalls.couponCode},
    'createdAt', ${addonInstalls.createdAt}, 'endedAt', ${addonInstalls.endedAt},
    'endpointName', coalesce(${endpoints.label}, ${endpoints.name}),
    'changes', (select coalesce(json_agg(json_build_object('changedAt', ${addonPlanChanges.changedAt},
        'fromPlanSlug', ${addonPlanChanges.fromPlanSlug}, 'fromInterval', ${addonPlanChanges.fromInterval})
        order by ${addonPlanChanges.changedAt}), '[]')
      from ${addonPlanChanges}
      where ${addonPlanChanges.accountId} = ${accountId} and ${addonPlanChanges.installId} = ${addonInstalls.id}))
    order by ${addonInstalls.createdAt}), '[]')
  from ${addonInstalls} left join ${endpoints} on ${endpoints.id} = ${addonInstalls.endpointId}
  where ${and(eq(addonInstalls.accountId, accountId), liveIn(start, end))})`;

interface InstallJson extends Omit<InstallInPeriod["install"], "createdAt" | "endedAt"> {
  createdAt: string;
  endedAt: string | null;
  changes: { changedAt: string; fromPlanSlug: string; fromInterval: string }[];
}

/** The rows of an installsInPeriodJson value (JSON carries its timestamps as text). */
export const installsInPeriodOf = (json: unknown[]): InstallInPeriod[] =>
  (json as InstallJson[]).map(({ changes, ...install }) => ({
    install: {
      ...install,
      createdAt: new Date(install.createdAt),
      endedAt: install.endedAt === null ? null : new Date(install.endedAt),
    },
    changes: changes.map((c) => ({ ...c, changedAt: new Date(c.changedAt) })),
  }));

/** The installs of the accounts named made before `end` and not ended by `start` (each account's own period is narrower). */
export async function installsOfAccountsLiveIn(
  db: Executor,
  accountIds: readonly string[],
  period: { start: Date; end: Date },
) {
  if (accountIds.length === 0) return [];
  return db
    .select({
      ...getTableColumns(addonInstalls),
      endpointName: sql<string | null>`coalesce(${endpoints.label}, ${endpoints.name})`,
    })
    .from(addonInstalls)
    .leftJoin(endpoints, eq(endpoints.id, addonInstalls.endpointId))
    .where(and(inArray(addonInstalls.accountId, [...accountIds]), liveIn(period.start, period.end)))
    .orderBy(addonInstalls.createdAt);
}

export async function recordPlanChange(
  db: Executor,
  accountId: string,
  change: Omit<PlanChangeRow, "id" | "accountId">,
) {
  await db.insert(addonPlanChanges).values({ ...change, accountId });
}

/** The plan changes of the installs named, oldest first. */
export async function planChangesOf(db: Executor, accountId: string, installIds: readonly string[]) {
  if (installIds.length === 0) return [];
  return db
    .select()
    .from(addonPlanChanges)
    .where(and(eq(addonPlanChanges.accountId, accountId), inArray(addonPlanChanges.installId, [...installIds])))
    .orderBy(asc(addonPlanChanges.changedAt));
}

/**
 * Installs whose period ended with a change waiting (a deactivation or a downgrade), every account's:
 * the housekeeping that settles them is the service's own, and answers nothing to a user.
 */
export async function installsDueAt(db: Executor, now: Date): Promise<InstallRow[]> {
  return db
    .select()
    .from(addonInstalls)
    .where(
      and(
        live,
        or(
          lte(addonInstalls.deactivatesAt, now),
          and(isNotNull(addonInstalls.pendingPlanSlug), lte(addonInstalls.currentPeriodEnd, now)),
        ),
      ),
    );
}

/**
 * The live installs on the endpoints named (every endpoint when none are): the proxy's records read
 * them, as the security domain's records do, unscoped by account and never returned to a user.
 */
export async function installsForProxy(db: Executor, endpointIds?: readonly string[]) {
  return db
    .select({
      endpointId: addonInstalls.endpointId,
      addonSlug: addonInstalls.addonSlug,
      planSlug: addonInstalls.planSlug,
      disabledMethods: addonInstalls.disabledMethods,
    })
    .from(addonInstalls)
    .where(
      and(
        live,
        isNotNull(addonInstalls.endpointId),
        endpointIds ? inArray(addonInstalls.endpointId, [...endpointIds]) : undefined,
      ),
    );
}

/**
 * The live endpoint installs of one endpoint, or of every endpoint (scope null), for the proxy's limits,
 * with their account's billing period as its subscription row holds it.
 */
export async function installsForLimits(db: Executor, scope: { accountId: string; endpointId: string } | null) {
  return db
    .select({
      id: addonInstalls.id,
      accountId: addonInstalls.accountId,
      endpointId: addonInstalls.endpointId,
      addonSlug: addonInstalls.addonSlug,
      planSlug: addonInstalls.planSlug,
      currentPeriodStart: subscriptions.currentPeriodStart,
      currentPeriodEnd: subscriptions.currentPeriodEnd,
    })
    .from(addonInstalls)
    .innerJoin(subscriptions, eq(subscriptions.accountId, addonInstalls.accountId))
    .where(
      and(
        live,
        isNotNull(addonInstalls.endpointId),
        scope
          ? and(eq(addonInstalls.accountId, scope.accountId), eq(addonInstalls.endpointId, scope.endpointId))
          : undefined,
      ),
    );
}

export async function recordEvent(
  db: Executor,
  accountId: string,
  event: { kind: string; subject: string; endpointId?: string | null },
) {
  await db.insert(addonEvents).values({ accountId, ...event });
}
