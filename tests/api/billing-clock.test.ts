// The billing clock closes every period that ended once: with two service processes ticking on one
// database, and across a service stopped mid-work and another started. What is due is read from the
// database (a subscription whose period ended) and each close is one transaction on the locked
// subscription row, guarded by the invoice's unique (account, period start).
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

const ctx = useTestApp({ NODEPLANE_BILLING_CLOCK_MS: "3600000" });
const running: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
});

const subscribe = (client: GqlClient, plan: string) =>
  client.gqlOk(
    "mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { subscription { id } } }",
    {
      input: { plan },
    },
  );

/** Accounts whose period and licence are moved `months` back: each has that many periods to close. */
async function dueAccounts(count: number, months: number): Promise<string[]> {
  const db = openDatabase(ctx.app.database.url, 2);
  try {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const user = await signUp(ctx.app);
      if (i % 2 === 0) await subscribe(user.client, "b6_accelerate");
      ids.push(user.viewer.id);
    }
    const shift = `interval '${months} months'`;
    await db.$client.query(
      `update subscriptions set current_period_start = current_period_start - ${shift}, current_period_end = current_period_end - ${shift} where account_id = any($1)`,
      [ids],
    );
    await db.$client.query(
      `update billing_states set licensed_start = licensed_start - ${shift}, licensed_end = licensed_end - ${shift} where account_id = any($1)`,
      [ids],
    );
    return ids;
  } finally {
    await db.$client.end();
  }
}

/** Invoices of the moved periods (not the Free period a subscription closed when it was made), by account. */
async function closedPeriods(ids: string[], since: Date) {
  const db = openDatabase(ctx.app.database.url, 1);
  try {
    const { rows } = await db.$client.query<{ account_id: string; n: number; periods: number; due: number }>(
      `select a.id as account_id,
         (select count(*)::int from invoices i where i.account_id = a.id and i.period_start < $2) as n,
         (select count(distinct i.period_start)::int from invoices i where i.account_id = a.id and i.period_start < $2) as periods,
         (select count(*)::int from subscriptions s where s.account_id = a.id and s.current_period_end <= now()) as due
       from accounts a where a.id = any($1)`,
      [ids, since],
    );
    return rows;
  } finally {
    await db.$client.end();
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not done in ${timeoutMs} ms`);
}

const serviceEnv = () => ({
  DATABASE_URL: ctx.app.database.url,
  NODEPLANE_LOCAL_CHAIN: "0",
  NODEPLANE_ROLES: "api",
  NODEPLANE_BILLING_CLOCK_MS: "50",
});

describe("the billing clock", () => {
  it("closes each ended period once with two service processes ticking on one database", {
    timeout: 240_000,
  }, async () => {
    const ids = await dueAccounts(8, 3);
    const since = new Date(Date.now() - 60_000);
    const both = await Promise.all([
      startServiceProcess(serviceEnv(), 120_000),
      startServiceProcess(serviceEnv(), 120_000),
    ]);
    running.push(...both);
    await until(async () => (await closedPeriods(ids, since)).every((r) => r.due === 0), 60_000);
    for (const p of both) {
      await p.stop();
      running.splice(running.indexOf(p), 1);
    }
    const rows = await closedPeriods(ids, since);
    expect(rows.map((r) => [r.n, r.periods])).toEqual(ids.map(() => [3, 3]));
  });

  it("loses none and closes none twice when a service stops mid-work and another starts", {
    timeout: 240_000,
  }, async () => {
    const ids = await dueAccounts(8, 4);
    const since = new Date(Date.now() - 60_000);
    const first = await startServiceProcess(serviceEnv(), 120_000);
    running.push(first);
    // Stopped as soon as it has closed some, whatever it is in the middle of.
    await until(async () => (await closedPeriods(ids, since)).some((r) => r.n > 0), 60_000);
    await first.stop();
    running.splice(running.indexOf(first), 1);
    const second = await startServiceProcess(serviceEnv(), 120_000);
    running.push(second);
    await until(async () => (await closedPeriods(ids, since)).every((r) => r.due === 0), 60_000);
    const rows = await closedPeriods(ids, since);
    expect(rows.map((r) => [r.n, r.periods])).toEqual(ids.map(() => [4, 4]));
  });
});
