/**
 * The GraphQL read-path benchmark (`npm run bench -- graphql`, or `node --import tsx tests/bench/graphql.ts`).
 * The service runs as `npm start` runs it (`server/main.ts`, NODE_ENV=production, in a process of its own)
 * on a throw-away PostgreSQL, without local chain nodes (the API does not use them and their mining would
 * load the shared CPU). The demo owner signs in; its account gets 50 endpoints (the seed's two, tagged,
 * and 48 more). Load comes from this process with autocannon, 10 connections, three cases side by side
 * in alternating rounds:
 *   - anonymous `{ __typename }` (the baseline: HTTP, Fastify and GraphQL with no session),
 *   - signed-in `{ __typename }` (the same plus reading the session),
 *   - the endpoints list screen's own operation (read from screens/, as the console sends it) for 50 rows;
 *   - another selection of those rows with the shell's viewer beside it, which the answer cache never holds;
 * then the list operation's p50 at 1 connection, measured here with a sub-millisecond clock.
 * Targets: signed-in ≥ 0.8× anonymous; list ≥ 0.5× signed-in; list + viewer ≥ 0.3× signed-in; list p50 at
 * 1 connection ≤ 2 ms.
 * BENCH_SECONDS sets each throughput run's length (default 3), BENCH_ROUNDS the rounds (default 3).
 * BENCH_CPU_PROF=<directory> runs the service with `node --cpu-prof` and writes its profile there.
 * Beside the rates it prints the service's CPU time per request of each case (Linux, from /proc): on a machine
 * other work loads, that ratio moves far less than the rates do.
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import path from "node:path";
import autocannon from "autocannon";
import pg from "pg";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { loadRegistry } from "../../server/registry/registry.ts";
import { DEMO_OWNER } from "../../server/seed.ts";
import { startServiceProcess } from "../support/service-process.ts";
import { startPostgres } from "./postgres.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 10;
const ENDPOINTS = 50;
const LATENCY_SAMPLES = 2000;
/** The screen whose operation is measured: the console's endpoints list. */
const LIST_SCREEN = "endpoints.list";
const DEMO_PASSWORD = "bench-demo-password";
const root = path.resolve(import.meta.dirname, "../..");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface GraphqlBenchResult {
  anonymousRps: number;
  signedInRps: number;
  listRps: number;
  listP50Ms: number;
  /** Another selection of the list with the shell's viewer beside it: read by executing, never kept. */
  uncachedRps: number;
}

/**
 * The endpoints list's rows with the console shell's viewer beside it: the viewer is read from the
 * database, so the answer cache never holds this query and every request executes it.
 */
const UNCACHED_READ = `query ListWithViewer($first: Int) {
  viewer { id userId email userFullName userRole isPrimaryUser companyName isVerified }
  endpoints(first: $first) { totalCount edges { node { id label chain network status httpUrl tags { tagId label } createdAt } } }
}`;

/** The list view's operation text (with its fragments), as the console sends it. */
function listOperation(): string {
  const registry = loadRegistry(root, loadApiSchema());
  const screen = registry.screens.find((s) => s.manifest.id === LIST_SCREEN);
  const view = screen?.manifest.views.find((v) => v.kind === "list");
  const operation = typeof view?.query === "string" ? registry.operations.get(view.query) : undefined;
  if (!operation) throw new Error(`${LIST_SCREEN} has no list view with an operation`);
  return operation.text;
}

async function gql(url: string, cookie: string | null, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (body.errors?.length) throw new Error(`${query.slice(0, 60)}: ${JSON.stringify(body.errors)}`);
  return { body, response };
}

/** CPU time (user + system) the process has used, in µs; null where /proc is not there. */
function cpuMicros(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

async function throughput(
  url: string,
  headers: Record<string, string>,
  body: string,
  duration = seconds,
  cpu?: { pid: number; samples: number[] },
): Promise<number> {
  const cpuBefore = cpu ? cpuMicros(cpu.pid) : null;
  const result = await autocannon({
    url: `${url}/graphql`,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    connections: CONNECTIONS,
    duration,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuAfter = cpu ? cpuMicros(cpu.pid) : null;
  if (cpu && cpuBefore !== null && cpuAfter !== null && result.requests.total > 0)
    cpu.samples.push((cpuAfter - cpuBefore) / result.requests.total);
  return result.requests.total / result.duration;
}

/** The p50 in ms of `count` requests sent one after another on one keep-alive connection. */
async function p50OneConnection(url: string, headers: Record<string, string>, body: string, count: number) {
  const target = new URL(`${url}/graphql`);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const start = process.hrtime.bigint();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers },
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          res.on("data", () => {});
          res.on("end", () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  for (let i = 0; i < 200; i++) await one();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) samples.push(await one());
  agent.destroy();
  return median(samples);
}

export async function runGraphqlBench(log: (line: string) => void = console.log): Promise<GraphqlBenchResult> {
  const postgres = await startPostgres();
  let service: Awaited<ReturnType<typeof startServiceProcess>> | null = null;
  try {
    service = await startServiceProcess(
      {
        NODE_ENV: "production",
        NODEPLANE_ALLOWED_HOSTS: "127.0.0.1,localhost",
        DATABASE_URL: postgres.url,
        NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
        NODEPLANE_LOCAL_CHAIN: "0",
      },
      60_000,
      process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
    );
    const url = service.url;
    const signIn = await gql(
      url,
      null,
      "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      { e: DEMO_OWNER, p: DEMO_PASSWORD },
    );
    const cookie = signIn.response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const { id: accountId } = (signIn.body.data as { signIn: { id: string } }).signIn;

    // Room for 50 endpoints on the demo plan, then the endpoints the seed did not make.
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query("update subscriptions set endpoint_limit = $2 where account_id = $1", [accountId, ENDPOINTS]);
    await admin.end();
    const create = "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }";
    const seeded = (await gql(url, cookie, "{ endpoints(first: 100) { totalCount } }")).body.data as {
      endpoints: { totalCount: number };
    };
    for (let i = seeded.endpoints.totalCount; i < ENDPOINTS; i++) {
      await gql(url, cookie, create, {
        input: { chain: "ethereum", network: "ethereum-sepolia", label: `bench ${i + 1}` },
      });
    }

    // Statistics, as autovacuum keeps them on a running database: without them the planner guesses for
    // the fresh tables (a hash join per listed row for its tags).
    const analyze = new pg.Client({ connectionString: postgres.url });
    await analyze.connect();
    await analyze.query("analyze");
    await analyze.end();

    const list = listOperation();
    const variables = { first: ENDPOINTS };
    const listBody = JSON.stringify({ query: list, variables });
    const page = (await gql(url, cookie, list, variables)).body.data as {
      endpoints: { edges: unknown[] };
    };
    if (page.endpoints.edges.length !== ENDPOINTS)
      throw new Error(`the list shows ${page.endpoints.edges.length} endpoints, not ${ENDPOINTS}`);

    const typename = JSON.stringify({ query: "{ __typename }" });
    const cases: { name: string; headers: Record<string, string>; body: string }[] = [
      { name: "anonymous { __typename }", headers: {}, body: typename },
      { name: "signed-in { __typename }", headers: { cookie }, body: typename },
      { name: `endpoints list (${ENDPOINTS} rows)`, headers: { cookie }, body: listBody },
      {
        name: `list + viewer, not kept (${ENDPOINTS} rows)`,
        headers: { cookie },
        body: JSON.stringify({ query: UNCACHED_READ, variables }),
      },
    ];
    // Warm-up, not counted: the first runs of a case are slower (JIT, prepared statements, the query cache).
    for (const c of cases) await throughput(url, c.headers, c.body, 1);
    const samples = cases.map(() => [] as number[]);
    const cpuSamples = cases.map(() => [] as number[]);
    const servicePid = service.pid;
    for (let round = 0; round < rounds; round++) {
      for (const [i, c] of cases.entries()) {
        const rps = await throughput(url, c.headers, c.body, seconds, { pid: servicePid, samples: cpuSamples[i] });
        samples[i].push(rps);
        const cpu = cpuSamples[i].at(-1);
        log(
          `  round ${round + 1} ${c.name}: ${Math.round(rps)} req/s${cpu === undefined ? "" : `, ${cpu.toFixed(1)} µs service CPU per request`}`,
        );
      }
    }
    const [anonymousRps, signedInRps, listRps, uncachedRps] = samples.map(median);
    const listP50Ms = await p50OneConnection(url, { cookie }, listBody, LATENCY_SAMPLES);

    log(`\nGraphQL read path, ${CONNECTIONS} connections, median of ${rounds} round(s) of ${seconds} s`);
    const row = (name: string, rps: number, ratio: string) =>
      log(`  ${name.padEnd(26)} ${String(Math.round(rps)).padStart(7)} req/s  ${ratio}`);
    row("anonymous { __typename }", anonymousRps, "");
    row(
      "signed-in { __typename }",
      signedInRps,
      `${(signedInRps / anonymousRps).toFixed(2)}× anonymous (target ≥ 0.8×)`,
    );
    row(
      `endpoints list, ${ENDPOINTS} rows`,
      listRps,
      `${(listRps / signedInRps).toFixed(2)}× signed-in (target ≥ 0.5×)`,
    );
    row(`list + viewer, not kept`, uncachedRps, `${(uncachedRps / signedInRps).toFixed(2)}× signed-in (target ≥ 0.3×)`);
    log(`  endpoints list p50 at 1 connection: ${listP50Ms.toFixed(2)} ms (target ≤ 2 ms)`);
    if (cpuSamples.every((xs) => xs.length)) {
      const [anonymousCpu, signedInCpu, listCpu, uncachedCpu] = cpuSamples.map(median);
      log(
        `  service CPU per request (median): anonymous ${anonymousCpu.toFixed(1)} µs, signed-in ${signedInCpu.toFixed(1)} µs ` +
          `(anonymous/signed-in ${(anonymousCpu / signedInCpu).toFixed(2)}×), list ${listCpu.toFixed(1)} µs, ` +
          `list + viewer ${uncachedCpu.toFixed(1)} µs`,
      );
    }
    return { anonymousRps, signedInRps, listRps, listP50Ms, uncachedRps };
  } finally {
    await service?.stop();
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runGraphqlBench();
}
