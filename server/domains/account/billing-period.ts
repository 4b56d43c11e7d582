// The billing period rule, in one place beside the subscription it is read from: usage, key-value
// writes and function runs all bill against it, and the subscription's first period ends by it. Kept in
// the account domain, which imports none of them, so each can import it without a loop between domain
// folders (docs/decisions/0320-no-cycle-through-resolvers.md).
import type { Executor } from "../../platform/db/index.ts";
import { foundOr } from "../../platform/errors.ts";
import * as store from "./store.ts";

/** `date` moved by whole months (UTC), the day clamped to the target month's length. */
export function addMonths(date: Date, months: number): Date {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth() + months;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      y,
      m,
      Math.min(date.getUTCDate(), last),
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
      date.getUTCMilliseconds(),
    ),
  );
}

/**
 * Billing period `index` (0: the one `now` is in, 1: the one before …). Periods are months from the
 * subscription's current period start; when `now` is past its end the period has rolled over, even
 * before billing moves the subscription row on.
 */
export function billingPeriod(sub: { currentPeriodStart: Date; currentPeriodEnd: Date }, now: Date, index = 0) {
  let start = sub.currentPeriodStart;
  let end = sub.currentPeriodEnd;
  let guard = 0;
  while (now >= end && guard++ < 1200) {
    start = end;
    end = addMonths(end, 1);
  }
  while (now < start && guard++ < 1200) {
    end = start;
    start = addMonths(start, -1);
  }
  for (let i = 0; i < index; i++) {
    end = start;
    start = addMonths(start, -1);
  }
  return { start, end };
}

/** The account's billing period at `now` (its current one, by default): what other domains bill against. */
export async function currentBillingPeriod(db: Executor, accountId: string, now = new Date()) {
  return billingPeriod(foundOr((await store.getSubscription(db, accountId))?.subscription, "The subscription"), now);
}
