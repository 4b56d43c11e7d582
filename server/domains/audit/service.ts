import type { Executor } from "../../platform/db/index.ts";
import type { Role } from "../../platform/roles.ts";
import * as store from "./store.ts";

export type { AuditEntryRow } from "./store.ts";

/** The domains that keep entries in the audit log. */
export const AUDIT_AREAS = ["RATE_LIMITS", "SECURITY"] as const;
export type AuditArea = (typeof AUDIT_AREAS)[number];

/** Who made a change: the acting user (null for the service itself) and their role. */
export interface AuditActor {
  accountId: string;
  userId: string | null;
  role: Role;
}

/** One change, in its area's words (see audit/tables.ts for each field). */
export interface AuditEntry {
  area: AuditArea;
  endpointId?: string | null;
  action: string;
  subject: string;
  subjectId?: string | null;
  detail?: string | null;
  reason?: string | null;
  changes?: Record<string, unknown>;
}

/** Keeps one change in the account's audit log, in the transaction that makes it: the one writer of the log. */
export async function recordAudit(tx: Executor, actor: AuditActor, entry: AuditEntry): Promise<void> {
  const userEmail = actor.userId ? await store.userEmail(tx, actor.userId) : null;
  await store.insertEntry(tx, actor.accountId, {
    ...entry,
    changes: entry.changes ?? {},
    userId: actor.userId,
    userEmail,
    userRole: actor.role,
  });
}

/** The newest `limit` entries of an area on one of the account's endpoints, newest first. */
export const endpointAudit = (db: Executor, accountId: string, area: AuditArea, endpointId: string, limit: number) =>
  store.endpointEntries(db, accountId, area, endpointId, limit);

/** The newest `limit` entries of an area on each of the account's endpoints among `endpointIds`, newest first. */
export const endpointsAudit = (
  db: Executor,
  accountId: string,
  area: AuditArea,
  endpointIds: string[],
  limit: number,
) => store.entriesOfEndpoints(db, accountId, area, endpointIds, limit);
