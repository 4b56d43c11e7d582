/**
 * The large-batch benchmark (`npm run bench -- batch`, or `node --import tsx tests/bench/batch.ts`): what one
 * oversized JSON-RPC batch costs the service. The service runs as `npm start` runs it (`server/main.ts`,
 * NODE_ENV=production, a process of its own) on a throw-away PostgreSQL, forwarding ethereum-sepolia to an
 * anvil started here. The demo owner creates two endpoints, one with a rate limiter of 500 eth_blockNumber
 * a minute; both have the demo plan's requests per second, so most of a 1,000-call batch is refused. Each case sends one batch while this process asks `/healthz` one request after another and
 * reads the service's resident memory (VmRSS in /proc/<pid>/status) every 20 ms, over a window that
 * includes the meter's next flush (error logs written); the baseline is the same window with no batch.
 * Cases: 10,000 calls (670 KB, the issue's request) and a batch at the limit (1,000 calls) on each. BENCH_MAX_BATCH_CALLS sets the service's NODEPLANE_MAX_BATCH_CALLS
 * (e.g. 100000 to see what the 10,000-call batch costs when it is served). Targets: RSS growth under 50 MB; /healthz answers
 * throughout (its slowest answer at most 250 ms over the baseline's slowest); one error-log row per batch.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { DEMO_OWNER } from "../../server/seed.ts";
import { startServiceProcess } from "../support/service-process.ts";
import { startPostgres } from "./postgres.ts";

const DEMO_PASSWORD = "bench-demo-password";
/** How long each case watches the service: the batch, then past the meter's 1 s flush. */
const WINDOW_MS = 2500;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface BatchBenchRow {
  name: string;
  calls: number;
  bodyBytes: number;
  status: number | null;
  answerBytes: number;
  requestMs: number | null;
  rssGrowthMb: number;
  healthzP50Ms: number;
  healthzMaxMs: number;
  healthzCount: number;
  errorLogRows: number | null;
  /** Each error-log row written: its kind and failed/total calls. */
  errorLogs?: string;
}

async function gql(url: string, cookie: string | null, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (body.errors?.length) throw new Error(`${query.slice(0, 60)}: ${JSON.stringify(body.errors)}`);
  return { data: body.data as Record<string, unknown>, response };
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function post(url: string, body: string, agent: Agent): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function healthz(url: string, agent: Agent): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}/healthz`, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - started));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Watches the service for WINDOW_MS: /healthz one after another, RSS every 20 ms; `during` runs meanwhile. */
async function watch(
  url: string,
  pid: number,
  during: (() => Promise<{ status: number; bytes: number }>) | null,
): Promise<Omit<BatchBenchRow, "name" | "calls" | "bodyBytes" | "errorLogRows">> {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const before = await rssMb(pid);
  let peak = before;
  const latencies: number[] = [];
  const until = performance.now() + WINDOW_MS;
  const sampler = setInterval(() => {
    rssMb(pid).then(
      (mb) => {
        peak = Math.max(peak, mb);
      },
      () => undefined,
    );
  }, 20);
  const prober = (async () => {
    while (performance.now() < until) latencies.push(await healthz(url, agent));
  })();
  await new Promise((resolve) => setTimeout(resolve, 100));
  let answer: { status: number; bytes: number } | null = null;
  let requestMs: number | null = null;
  if (during) {
    const started = performance.now();
    answer = await during();
    requestMs = performance.now() - started;
  }
  await prober;
  clearInterval(sampler);
  peak = Math.max(peak, await rssMb(pid));
  agent.destroy();
  return {
    status: answer?.status ?? null,
    answerBytes: answer?.bytes ?? 0,
    requestMs,
    rssGrowthMb: peak - before,
    healthzP50Ms: median(latencies),
    healthzMaxMs: Math.max(...latencies),
    healthzCount: latencies.length,
  };
}

const batchBody = (calls: number) =>
  JSON.stringify(
    Array.from({ length: calls }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "eth_blockNumber", params: [] })),
  );

export async function runBatchBench(log: (line: string) => void = console.log): Promise<BatchBenchRow[]> {
  const anvil = await startAnvil({ chainId: 11155111, blockTimeSeconds: 1 });
  const configDir = mkdtempSync(path.join(tmpdir(), "nodeplane-bench-batch-"));
  const networksFile = path.join(configDir, "networks.json");
  writeFileSync(
    networksFile,
    JSON.stringify({
      local: { networks: [] },
      upstreams: { "ethereum-sepolia": { http: anvil.httpUrl, ws: anvil.wsUrl } },
    }),
  );
  const postgres = await startPostgres();
  let service: Awaited<ReturnType<typeof startServiceProcess>> | null = null;
  const db = new pg.Client({ connectionString: postgres.url });
  try {
    service = await startServiceProcess({
      NODE_ENV: "production",
      NODEPLANE_ALLOWED_HOSTS: "127.0.0.1,localhost",
      DATABASE_URL: postgres.url,
      NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
      NODEPLANE_LOCAL_CHAIN: "0",
      NODEPLANE_NETWORKS_CONFIG: networksFile,
      ...(process.env.BENCH_MAX_BATCH_CALLS ? { NODEPLANE_MAX_BATCH_CALLS: process.env.BENCH_MAX_BATCH_CALLS } : {}),
    });
    const { url, pid } = service;
    await db.connect();
    const signIn = await gql(
      url,
      null,
      "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      {
        e: DEMO_OWNER,
        p: DEMO_PASSWORD,
      },
    );
    const cookie = signIn.response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const { id: accountId } = signIn.data.signIn as { id: string };
    await db.query("update subscriptions set endpoint_limit = endpoint_limit + 2 where account_id = $1", [accountId]);
    const endpoint = async (label: string) => {
      const { data } = await gql(
        url,
        cookie,
        "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id exId initialToken } }",
        { input: { chain: "ethereum", network: "ethereum-sepolia", label } },
      );
      const e = data.createEndpoint as { id: string; exId: string; initialToken: string | null };
      return { id: e.id, rpcUrl: `${url}/rpc/${e.exId}${e.initialToken ? `/${e.initialToken}` : ""}` };
    };
    const free = await endpoint("bench batch plan limits");
    const limited = await endpoint("bench batch limited");
    await gql(
      url,
      cookie,
      `mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 500, methods: ["eth_blockNumber"], reason: "bench", limitByIP: false) { id } }`,
      { e: limited.id },
    );
    // Warm-up, not measured: the first requests load code and prepared statements.
    const warm = new Agent({ keepAlive: true });
    for (let i = 0; i < 20; i++) await post(free.rpcUrl, batchBody(10), warm);
    warm.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const logRows = async (endpointId: string) =>
      (
        await db.query<{ error_kind: string; calls: number; failed_calls: number; message: string }>(
          "select error_kind, calls, failed_calls, message from error_logs where endpoint_id = $1 order by id",
          [endpointId],
        )
      ).rows;
    const cases = [
      { name: "baseline (no batch)", calls: 0, target: null },
      { name: "10,000 calls, endpoint with a limiter", calls: 10_000, target: limited },
      { name: "10,000 calls, plan limits only", calls: 10_000, target: free },
      { name: "1,000 calls (the limit), plan limits only", calls: 1000, target: free },
      { name: "1,000 calls (the limit), endpoint with a limiter", calls: 1000, target: limited },
    ];
    const rows: BatchBenchRow[] = [];
    for (const c of cases) {
      const body = c.calls > 0 ? batchBody(c.calls) : "";
      const logsBefore = c.target ? (await logRows(c.target.id)).length : 0;
      const agent = new Agent({ keepAlive: false });
      const target = c.target;
      const measured = await watch(url, pid, target ? () => post(target.rpcUrl, body, agent) : null);
      agent.destroy();
      const row: BatchBenchRow = {
        name: c.name,
        calls: c.calls,
        bodyBytes: Buffer.byteLength(body),
        ...measured,
        errorLogRows: null,
      };
      if (target) {
        const written = (await logRows(target.id)).slice(logsBefore);
        row.errorLogRows = written.length;
        row.errorLogs = written.map((l) => `${l.error_kind} ${l.failed_calls}/${l.calls}`).join(", ");
      }
      rows.push(row);
      log(
        `  ${row.name.padEnd(42)} ${row.bodyBytes ? `${Math.round(row.bodyBytes / 1024)} KB → HTTP ${row.status}, ${row.answerBytes} B in ${row.requestMs?.toFixed(1)} ms, ${row.errorLogRows} error-log row(s) (${row.errorLogs}); ` : ""}` +
          `RSS +${row.rssGrowthMb.toFixed(1)} MB; /healthz p50 ${row.healthzP50Ms.toFixed(2)} ms, max ${row.healthzMaxMs.toFixed(1)} ms (${row.healthzCount} answers)`,
      );
    }
    return rows;
  } finally {
    await db.end().catch(() => undefined);
    await service?.stop();
    await postgres.stop();
    await anvil.stop();
    rmSync(configDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runBatchBench();
}
