import type { Db } from "../../../platform/db/index.ts";
import { getAccountOrFail, subscriptionOf } from "../../account/service.ts";
import { limitReachedEndpoints } from "../../endpoints/service.ts";
import { formatCents } from "../pdf.ts";
import { PAST_DUE } from "../service.ts";
import { unpaidInvoices } from "../store.ts";
import { chargesAwaitingAction } from "./service.ts";

/** A trial is said to be ending this many days before it does. */
export const TRIAL_ENDING_DAYS = 3;
const DAY_MS = 86_400_000;

/**
 * What the account must act on, as rows the console's alert views show (one list per banner, empty when
 * there is nothing to say): invoices left unpaid by a failed payment, those whose payment waits for the
 * payer's authentication, endpoints stopped at their monthly limit, and a free trial about to end.
 */
export async function accountBanners(db: Db, accountId: string, now = new Date()) {
  const sub = await subscriptionOf(db, accountId);
  const unpaid = sub?.subscription.status === PAST_DUE ? await unpaidInvoices(db, accountId) : [];
  // A payment the bank holds for the payer's authentication is not a decline: its banner says to authenticate.
  const waiting = await chargesAwaitingAction(
    db,
    accountId,
    unpaid.map((i) => i.id),
  );
  const row = (i: (typeof unpaid)[number]) => ({
    id: i.id,
    number: i.number,
    amountDue: formatCents(i.amountRemainingCents),
  });
  const limitReached = (await limitReachedEndpoints(db, accountId)).map((e) => ({
    id: e.id,
    name: e.label ?? e.name,
    network: e.network,
  }));
  const trialEnd = (await getAccountOrFail(db, accountId)).freeTrialEndsAt;
  const left = trialEnd ? trialEnd.getTime() - now.getTime() : 0;
  const trialEnding =
    trialEnd && left > 0 && left <= TRIAL_ENDING_DAYS * DAY_MS
      ? [{ id: "trial", endsAt: trialEnd, daysRemaining: Math.ceil(left / DAY_MS) }]
      : [];
  return {
    pastDue: unpaid.filter((i) => !waiting.has(i.id)).map(row),
    authenticationNeeded: unpaid.filter((i) => waiting.has(i.id)).map(row),
    limitReached,
    trialEnding,
  };
}
