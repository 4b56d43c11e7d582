/**
 * The REST benchmark (`npm run bench -- rest`, or `node --no-node-snapshot --import tsx tests/bench/rest.ts`).
 * The service runs as `npm start` runs it (server/main.ts, NODE_ENV=production, a process of its own) on a
 * throw-away PostgreSQL without local chain nodes. The demo owner's account gets 50 endpoints and an ADMIN
 * key made for CONSOLE_REST. Side by side, in alternating rounds at 10 connections:
 *   - REST: GET /rest/v1/endpoints?first=50 with the key in x-api-key;
 *   - GraphQL: the same operation (the REST contract's RestEndpoints, 50 rows) POSTed to /graphql with the key;
 * then at 1 connection (a sub-millisecond clock): the REST list's p50, and the cost of a key check: the p50 of
 * a keyed REST call refused right after its key is checked (an unknown query parameter, no database) less
 * the same call without a key (refused before any check), the median of the two sent in pairs, beside
 * GET /healthz (unauthenticated, one database round trip).
 * Targets: REST ≥ 0.9× GraphQL; REST list p50 ≤ 2 ms; a key check adds ≤ 0.05 ms p50.
 * BENCH_SECONDS sets each throughput run's length (default 3), BENCH_ROUNDS the rounds (default 3).
 */
import { Agent, request } from "node:http";
import autocannon from "autocannon";
import pg from "pg";
import { loadRestOperations } from "../../server/rest/contracts.ts";
import { DEMO_OWNER } from "../../server/seed.ts";
import { startServiceProcess } from "../support/service-process.ts";
import { startPostgres } from "./postgres.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 10;
const ENDPOINTS = 50;
const LATENCY_SAMPLES = 2000;
const DEMO_PASSWORD = "bench-demo-password";
const LIST = `/rest/v1/endpoints?first=${ENDPOINTS}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface RestBenchResult {
  restRps: number;
  graphqlRps: number;
  restP50Ms: number;
  graphqlP50Ms: number;
  healthP50Ms: number;
  keyedRefusalP50Ms: number;
  unkeyedRefusalP50Ms: number;
  /** The median of a keyed call's time less an unkeyed one's, sent in pairs. */
  keyCheckMs: number;
}

async function gql(
  url: string,
  headers: Record<string, string>,
  query: string,
  variables: Record<string, unknown> = {},
) {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (body.errors?.length) throw new Error(`${query.slice(0, 60)}: ${JSON.stringify(body.errors)}`);
  return { body, response };
}

interface Case {
  name: string;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
}

async function throughput(url: string, c: Case, duration = seconds): Promise<number> {
  const result = await autocannon({
    url: `${url}${c.path}`,
    method: c.method,
    headers: c.body ? { "content-type": "application/json", ...c.headers } : c.headers,
    body: c.body,
    connections: CONNECTIONS,
    duration,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${c.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.total / result.duration;
}

/** A function sending `c` on one keep-alive connection and answering its time in ms. */
function sender(url: string, c: Case, status: number, agent: Agent) {
  const target = new URL(`${url}${c.path}`);
  const headers: Record<string, string | number> = { ...c.headers };
  if (c.body) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(c.body);
  }
  return () =>
    new Promise<number>((resolve, reject) => {
      const start = process.hrtime.bigint();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: c.method,
          agent,
          headers,
        },
        (res) => {
          if (res.statusCode !== status) reject(new Error(`${c.name}: status ${res.statusCode}, not ${status}`));
          res.on("data", () => {});
          res.on("end", () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
        },
      );
      req.on("error", reject);
      req.end(c.body);
    });
}

/** The p50 in ms of `count` requests sent one after another on one keep-alive connection. */
async function p50OneConnection(url: string, c: Case, status: number, count = LATENCY_SAMPLES) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const one = sender(url, c, status, agent);
  for (let i = 0; i < 200; i++) await one();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) samples.push(await one());
  agent.destroy();
  return median(samples);
}

/**
 * The median of `b`'s time less `a`'s, sent in pairs one after the other (alternating which goes first) on
 * one connection: the other work on a shared machine moves both of a pair alike, so their difference holds.
 */
async function pairedDifferenceP50(url: string, a: [Case, number], b: [Case, number], count = LATENCY_SAMPLES) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sendA = sender(url, a[0], a[1], agent);
  const sendB = sender(url, b[0], b[1], agent);
  for (let i = 0; i < 200; i++) {
    await sendA();
    await sendB();
  }
  const differences: number[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2) differences.push(-(await sendA()) + (await sendB()));
    else differences.push((await sendB()) - (await sendA()));
  }
  agent.destroy();
  return median(differences);
}

export async function runRestBench(log: (line: string) => void = console.log): Promise<RestBenchResult> {
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
    );
    const url = service.url;
    const signIn = await gql(url, {}, "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }", {
      e: DEMO_OWNER,
      p: DEMO_PASSWORD,
    });
    const cookie = signIn.response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const { id: accountId } = (signIn.body.data as { signIn: { id: string } }).signIn;
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query("update subscriptions set endpoint_limit = $2 where account_id = $1", [accountId, ENDPOINTS]);
    await admin.end();
    const seeded = (await gql(url, { cookie }, "{ endpoints(first: 100) { totalCount } }")).body.data as {
      endpoints: { totalCount: number };
    };
    for (let i = seeded.endpoints.totalCount; i < ENDPOINTS; i++)
      await gql(url, { cookie }, "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }", {
        input: { chain: "ethereum", network: "ethereum-sepolia", label: `bench ${i + 1}` },
      });
    const made = await gql(
      url,
      { cookie },
      "mutation($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { key } }",
      { input: { name: "bench", role: "ADMIN", applications: ["CONSOLE_REST"] } },
    );
    const key = (made.body.data as { createAccessToken: { key: string } }).createAccessToken.key;
    const analyze = new pg.Client({ connectionString: postgres.url });
    await analyze.connect();
    await analyze.query("analyze");
    await analyze.end();

    const operation = loadRestOperations().find((op) => op.id === "listEndpoints");
    if (!operation) throw new Error("no listEndpoints contract");
    const graphqlBody = JSON.stringify({ query: operation.source, variables: { first: ENDPOINTS } });
    const rest: Case = {
      name: `REST list (${ENDPOINTS} rows)`,
      method: "GET",
      path: LIST,
      headers: { "x-api-key": key },
    };
    const graphql: Case = {
      name: `GraphQL, same read (${ENDPOINTS} rows)`,
      method: "POST",
      path: "/graphql",
      headers: { "x-api-key": key },
      body: graphqlBody,
    };
    const restAnswer = (await (await fetch(`${url}${LIST}`, { headers: { "x-api-key": key } })).json()) as {
      data: unknown[];
    };
    if (restAnswer.data.length !== ENDPOINTS) throw new Error(`REST lists ${restAnswer.data.length}, not ${ENDPOINTS}`);

    const cases = [rest, graphql];
    for (const c of cases) await throughput(url, c, 1);
    const samples = cases.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++)
      for (const [i, c] of cases.entries()) {
        const rps = await throughput(url, c);
        samples[i].push(rps);
        log(`  round ${round + 1} ${c.name}: ${Math.round(rps)} req/s`);
      }
    const [restRps, graphqlRps] = samples.map(median);

    const restP50Ms = await p50OneConnection(url, rest, 200);
    const graphqlP50Ms = await p50OneConnection(url, graphql, 200);
    const probe = "/rest/v1/endpoints?probe=1";
    const healthP50Ms = await p50OneConnection(
      url,
      { name: "/healthz", method: "GET", path: "/healthz", headers: {} },
      200,
    );
    const keyed: [Case, number] = [
      { name: "keyed, refused after the key check", method: "GET", path: probe, headers: { "x-api-key": key } },
      422,
    ];
    const unkeyed: [Case, number] = [
      { name: "no key, refused before any check", method: "GET", path: probe, headers: {} },
      401,
    ];
    const keyedRefusalP50Ms = await p50OneConnection(url, ...keyed);
    const unkeyedRefusalP50Ms = await p50OneConnection(url, ...unkeyed);
    const keyCheckMs = await pairedDifferenceP50(url, unkeyed, keyed);

    log(`\nREST against GraphQL, ${CONNECTIONS} connections, median of ${rounds} round(s) of ${seconds} s`);
    log(
      `  ${rest.name.padEnd(32)} ${String(Math.round(restRps)).padStart(7)} req/s  ${(restRps / graphqlRps).toFixed(2)}× GraphQL (target ≥ 0.9×)`,
    );
    log(`  ${graphql.name.padEnd(32)} ${String(Math.round(graphqlRps)).padStart(7)} req/s`);
    log(
      `  p50 at 1 connection: REST list ${restP50Ms.toFixed(3)} ms (target ≤ 2 ms), GraphQL ${graphqlP50Ms.toFixed(3)} ms`,
    );
    log(
      `  key check: ${keyCheckMs.toFixed(3)} ms (median of paired differences; target ≤ 0.05 ms); keyed refusal ` +
        `p50 ${keyedRefusalP50Ms.toFixed(3)} ms, unkeyed ${unkeyedRefusalP50Ms.toFixed(3)} ms, GET /healthz ${healthP50Ms.toFixed(3)} ms`,
    );
    return {
      restRps,
      graphqlRps,
      restP50Ms,
      graphqlP50Ms,
      healthP50Ms,
      keyedRefusalP50Ms,
      unkeyedRefusalP50Ms,
      keyCheckMs,
    };
  } finally {
    await service?.stop();
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runRestBench();
