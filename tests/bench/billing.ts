/**
 * The billing benchmark (`npm run bench -- billing`). The service runs as `npm start` runs it (its own
 * process, NODE_ENV=production) on a throw-away PostgreSQL, without chain nodes, its billing clock ticking
 * every 500 ms. BENCH_BILLING_ACCOUNTS accounts (10,000 by default) on the Build plan are written with SQL,
 * each with a month of metered usage (a usage row per day, some above the plan's allowance), the demo
 * account too. Measured side by side in one run:
 *   1. `upcomingInvoicePreview` of the demo account (a month of usage): p50 at 1 connection;
 *   2. the service's GraphQL p50 at 1 connection (the endpoints list) for BENCH_BILLING_PROBE_MS without a
 *      close, then while the service's clock closes every account's period (all made due at once): the
 *      close's rate is the accounts closed over the time from due to the last invoice written;
 *   3. one invoice PDF (GET /billing/invoices/<id>/pdf): p50 at 1 connection.
 * The machine is shared: the load average is printed beside the figures.
 */
import { Agent, request } from "node:http";
import { loadavg } from "node:os";
import pg from "pg";
import { DEMO_OWNER } from "../../server/seed.ts";
import { startServiceProcess } from "../support/service-process.ts";
import { startPostgres } from "./postgres.ts";

const ACCOUNTS = Number(process.env.BENCH_BILLING_ACCOUNTS ?? 10_000);
const PROBE_MS = Number(process.env.BENCH_BILLING_PROBE_MS ?? 3000);
const SAMPLES = 300;
const DEMO_PASSWORD = "bench-demo-password";
/** The endpoints list with the shell's viewer beside it: the viewer is read from the database, so no answer cache holds it. */
const PROBE =
  "{ viewer { id userId email userRole companyName } endpoints(first: 20) { totalCount edges { node { id label status network } } } }";
const PREVIEW =
  "{ viewer { subscription { upcomingInvoicePreview { amountDueCents subtotalCents taxCents lines { type amount description } } } } }";

export interface BillingBenchResult {
  load: string;
  accounts: number;
  closeSeconds: number;
  accountsPerSecond: number;
  probeP50Ms: number;
  probeDuringCloseP50Ms: number;
  previewP50Ms: number;
  pdfP50Ms: number;
}

const loadText = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One request after another on one keep-alive connection, each timed in ms. */
function oneConnection(url: string, cookie: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const send = (method: "GET" | "POST", path: string, body?: string) =>
    new Promise<number>((resolve, reject) => {
      const start = process.hrtime.bigint();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path,
          method,
          agent,
          headers: body
            ? { "content-type": "application/json", "content-length": Buffer.byteLength(body), cookie }
            : { cookie },
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`${path}: status ${res.statusCode}`));
          res.on("data", () => {});
          res.on("end", () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return {
    graphql: (query: string) => send("POST", "/graphql", JSON.stringify({ query })),
    get: (path: string) => send("GET", path),
    close: () => agent.destroy(),
  };
}

async function p50(run: () => Promise<number>, count: number) {
  for (let i = 0; i < 30; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) samples.push(await run());
  return median(samples);
}

/** Samples `run` one after another until `until` says stop (or `ms` pass); the p50 of the samples. */
async function p50While(run: () => Promise<number>, until: () => boolean) {
  const samples: number[] = [];
  while (!until()) samples.push(await run());
  return { p50: median(samples), samples: samples.length };
}

/** `count` accounts on the Build plan with a month of usage ending now, their periods ending in a day. */
async function seedAccounts(db: pg.Client, count: number) {
  await db.query("begin");
  await db.query(
    `create temporary table bench_accounts on commit drop as
       select gen_random_uuid() as id, n from generate_series(1, $1) as n`,
    [count],
  );
  await db.query("insert into accounts (id, company_name) select id, 'Bench ' || n from bench_accounts");
  await db.query(
    `insert into subscriptions (account_id, plan_id, current_period_start, current_period_end, endpoint_limit,
       responses_per_month, requests_per_second)
     select b.id, p.id, now() - interval '1 month', now() + interval '1 day', s.endpoint_limit,
       s.responses_per_month, s.requests_per_second
     from bench_accounts b, plans p, (select * from subscriptions limit 1) s where p.id = 'b6_build'`,
  );
  await db.query("commit");
}

/** A usage row a day for the last 30 days for every account: 1 to 4 million credits a day each. */
async function seedUsage(db: pg.Client) {
  await db.query(
    `insert into usage_minutes (account_id, endpoint_id, method, minute, requests, credits)
     select s.account_id, gen_random_uuid(), 'eth_call', date_trunc('minute', now() - make_interval(days => d, mins => 5)),
       100000, 1000000 + ((hashtext(s.account_id::text || d)::bigint & 2147483647) % 3000000)
     from subscriptions s, generate_series(1, 30) as d`,
  );
  await db.query("analyze");
}

export async function runBillingBench(log: (line: string) => void = console.log): Promise<BillingBenchResult> {
  const postgres = await startPostgres();
  let service: Awaited<ReturnType<typeof startServiceProcess>> | null = null;
  const db = new pg.Client({ connectionString: postgres.url });
  try {
    service = await startServiceProcess(
      {
        NODE_ENV: "production",
        NODEPLANE_ALLOWED_HOSTS: "127.0.0.1,localhost",
        DATABASE_URL: postgres.url,
        NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
        NODEPLANE_LOCAL_CHAIN: "0",
        NODEPLANE_BILLING_CLOCK_MS: "500",
        NODEPLANE_BILLING_TAX_BPS: "1000",
      },
      60_000,
    );
    const url = service.url;
    const signIn = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
        variables: { e: DEMO_OWNER, p: DEMO_PASSWORD },
      }),
    });
    const cookie = signIn.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    await db.connect();
    // The demo account on the Build plan for a month, as the others.
    await db.query(
      `update subscriptions set plan_id = 'b6_build', current_period_start = now() - interval '1 month',
         current_period_end = now() + interval '1 day'`,
    );
    const seedStart = performance.now();
    await seedAccounts(db, ACCOUNTS);
    await seedUsage(db);
    log(
      `seeded ${ACCOUNTS} accounts with a month of usage in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );
    const total = Number((await db.query("select count(*) from subscriptions")).rows[0].count);

    const client = oneConnection(url, cookie);
    const previewP50Ms = await p50(() => client.graphql(PREVIEW), SAMPLES);
    const baselineEnd = performance.now() + PROBE_MS;
    const baseline = await p50While(
      () => client.graphql(PROBE),
      () => performance.now() > baselineEnd,
    );
    // Every period due at once: the service's clock closes them.
    const invoicesBefore = Number((await db.query("select count(*) from invoices")).rows[0].count);
    await db.query("update subscriptions set current_period_end = now() - interval '1 second'");
    const due = performance.now();
    let done = false;
    let doneAt = 0;
    const watch = (async () => {
      const watcher = new pg.Client({ connectionString: postgres.url });
      await watcher.connect();
      while (!done) {
        const closed = Number((await watcher.query("select count(*) from invoices")).rows[0].count) - invoicesBefore;
        if (closed >= total) {
          doneAt = performance.now();
          done = true;
        } else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await watcher.end();
    })();
    const during = await p50While(
      () => client.graphql(PROBE),
      () => done,
    );
    await watch;
    const closeSeconds = (doneAt - due) / 1000;

    const { rows } = await db.query(
      `select i.id from invoices i join memberships m on m.account_id = i.account_id join users u on u.id = m.user_id
       where u.email = $1 order by i.created_at desc limit 1`,
      [DEMO_OWNER],
    );
    const pdfP50Ms = await p50(() => client.get(`/billing/invoices/${rows[0].id}/pdf`), 100);
    client.close();
    const result = {
      load: loadText(),
      accounts: total,
      closeSeconds,
      accountsPerSecond: total / closeSeconds,
      probeP50Ms: baseline.p50,
      probeDuringCloseP50Ms: during.p50,
      previewP50Ms,
      pdfP50Ms,
    };
    log(
      `closed ${total} periods in ${closeSeconds.toFixed(1)} s (${Math.round(result.accountsPerSecond)}/s); GraphQL p50 ${baseline.p50.toFixed(2)} ms without (${baseline.samples} calls), ${during.p50.toFixed(2)} ms during the close (${during.samples} calls); preview p50 ${previewP50Ms.toFixed(2)} ms; PDF p50 ${pdfP50Ms.toFixed(2)} ms; load ${result.load}`,
    );
    return result;
  } finally {
    await db.end().catch(() => {});
    if (service) await service.stop();
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runBillingBench();
