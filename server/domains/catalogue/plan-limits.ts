import { readFileSync } from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { FREE_PLAN_ID } from "../account/service.ts";
import { subscriptions } from "../account/tables.ts";

/**
 * A catalogue of limits per plan (`schemas/catalogue/<file>`, `{ "plans": { "<plan id>": T } }`), read
 * once: a plan it does not name, or an account without a subscription, gets the Free plan's.
 */
export function planLimitsCatalogue<T>(file: string) {
  const source = path.resolve(import.meta.dirname, "../../../schemas/catalogue", file);
  const plans = (JSON.parse(readFileSync(source, "utf8")) as { plans: Record<string, T> }).plans;
  const ofPlan = (planId: string | undefined): T => plans[planId ?? FREE_PLAN_ID] ?? plans[FREE_PLAN_ID];
  return {
    plans,
    ofPlan,
    /** The limits of the account's current plan. */
    async ofAccount(db: Executor, accountId: string): Promise<T> {
      const [row] = await db
        .select({ planId: subscriptions.planId })
        .from(subscriptions)
        .where(eq(subscriptions.accountId, accountId));
      return ofPlan(row?.planId);
    },
  };
}
