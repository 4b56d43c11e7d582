import { eq } from "drizzle-orm";
import { subscriptions } from "../../server/domains/account/tables.ts";
import type { Db } from "../../server/platform/db/index.ts";

/** Moves an account to another plan, as billing would (tests of what a plan includes). */
export async function putOnPlan(db: Db, accountId: string, planId: string): Promise<void> {
  await db.update(subscriptions).set({ planId }).where(eq(subscriptions.accountId, accountId));
}
