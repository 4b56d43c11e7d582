/**
 * The console delivery benchmark (`npm run bench -- console`, or `node --import tsx tests/bench/console.ts`).
 *
 * - Time to ready of `npm start` (the command's spawn to /healthz answering): the first start of a fresh
 *   clone (no dist/, no dist-server/, an empty data directory: it builds the console and the service's
 *   bundle), then a restart on the same data directory; beside them, the baseline of a first start on an
 *   empty data directory with the builds current. Each start's steps are timed from the command by the
 *   lines it prints (LOG_LEVEL=info): the console build, PostgreSQL, seeding, listening.
 * - Initial JavaScript of the sign-in page and of the first list screen (/endpoints, signed in): every
 *   script Chromium fetched until the network was idle, counted at its gzip size (the build's .gz copy).
 * - Largest contentful paint of /endpoints, signed in, cold cache, in Chromium at 10 Mbit/s and 40 ms
 *   (CDP Network.emulateNetworkConditions, Lighthouse's desktop network): median of 5 loads, beside the
 *   same loads unthrottled.
 *
 * Runs `npm start` itself on free ports with a throw-away data directory, so it takes ~1–2 minutes. It
 * deletes this checkout's dist/ and dist-server/ (the fresh clone), so no service may run from it.
 * BENCH_CONSOLE_STARTS_ONLY=1 measures the three starts only (no browser), in ~30 s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { ensureBuilt } from "../../server/platform/console-build.ts";
import { ensureServerBuilt, SERVER_BUILD_DIR } from "../../server/platform/server-build.mjs";
import { CHROMIUM_FLAGS, ensureChromium } from "../e2e/harness-chromium.ts";
import { freePort } from "../support/ports.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const distDir = path.join(repoRoot, "dist");
const DEMO_EMAIL = "demo@nodeplane.local";
const DEMO_PASSWORD = "bench-demo-password";
const LOADS = 5;
/** Lighthouse's desktop throttling: 10 Mbit/s both ways, 40 ms round trip. */
const THROTTLED = { offline: false, latency: 40, downloadThroughput: 1_250_000, uploadThroughput: 1_250_000 };

export interface ConsoleBenchResult {
  /** A fresh clone's first start: both builds, an empty data directory. */
  startFreshMs: number;
  /** A restart on the same data directory. */
  startRestartMs: number;
  /** The baseline: a first start on an empty data directory with the builds current. */
  startFirstMs: number;
  /** Each start's steps, ms from the command. */
  steps: { fresh: Steps; restart: Steps; first: Steps };
  /** Null when BENCH_CONSOLE_STARTS_ONLY=1. */
  pages: PagesResult | null;
}

export interface PagesResult {
  signInJsGzipBytes: number;
  listJsGzipBytes: number;
  signInScripts: number;
  listScripts: number;
  lcpThrottledMs: number[];
  lcpUnthrottledMs: number[];
}

interface Started {
  url: string;
  readyMs: number;
  steps: Steps;
  stop(): Promise<void>;
}

/** When a start printed each of these, ms from the command (absent: not printed by that start). */
export type Steps = Partial<Record<(typeof STEP_MARKS)[number]["step"], number>>;
const STEP_MARKS = [
  { step: "console build started", text: "Building the console" },
  { step: "PostgreSQL init started", text: "initialising the embedded PostgreSQL server" },
  { step: "PostgreSQL ready", text: "embedded PostgreSQL server started" },
  { step: "console built", text: "✓ built in" },
  { step: "seeding", text: "seeding the demo account" },
  { step: "listening", text: "Server listening at" },
] as const;

const formatSteps = (steps: Steps) =>
  Object.entries(steps)
    .sort((a, b) => (a[1] ?? 0) - (b[1] ?? 0))
    .map(([step, ms]) => `${step} ${((ms ?? 0) / 1000).toFixed(2)} s`)
    .join(", ");

/** `npm start` in its own process group, timed from spawn to the first 200 from /healthz. */
async function npmStart(dataDir: string): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const startedAt = Date.now();
  const child: ChildProcess = spawn("npm", ["start"], {
    cwd: repoRoot,
    detached: true,
    env: {
      ...process.env,
      NODE_ENV: "production",
      NODEPLANE_ALLOWED_HOSTS: "127.0.0.1,localhost",
      PORT: String(port),
      HOST: "127.0.0.1",
      NODEPLANE_DATA_DIR: dataDir,
      NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
      // info: the lines that time the start's steps.
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const steps: Steps = {};
  const read = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-4000);
    for (const line of text.split("\n")) {
      const mark = STEP_MARKS.find((m) => line.includes(m.text));
      if (!mark || steps[mark.step] !== undefined) continue;
      // The service's log lines carry their own time; the builds' lines are timed as they arrive.
      let at = performance.now() - started;
      try {
        at = (JSON.parse(line) as { time: number }).time - startedAt;
      } catch {
        // Not a log line.
      }
      steps[mark.step] = at;
    }
  };
  child.stdout?.on("data", read);
  child.stderr?.on("data", read);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start was not ready in 180 s:\n${output}`);
    const ok = await fetch(`${url}/healthz`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const readyMs = performance.now() - started;
  return {
    url,
    readyMs,
    steps,
    async stop() {
      if (!child.pid) return;
      process.kill(-child.pid, "SIGTERM");
      await exited;
      // npm exits before the service has closed; the next start on this data directory begins once it has
      // (the service takes its lock ~0.3 s after the command, and would find this one still closing).
      const pid = child.pid;
      const groupAlive = () => {
        try {
          process.kill(-pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (const deadline = Date.now() + 60_000; groupAlive() && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 20));
    },
  };
}

/** The build's gzip size of a script the console fetched. */
function gzipSize(url: string): number {
  const file = path.join(distDir, new URL(url).pathname);
  const gz = `${file}.gz`;
  if (!existsSync(gz)) throw new Error(`${url} has no .gz in dist/`);
  return statSync(gz).size;
}

async function sessionCookie(url: string): Promise<string> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      variables: { e: DEMO_EMAIL, p: DEMO_PASSWORD },
    }),
  });
  const line = response.headers.getSetCookie().find((l) => l.startsWith("np_session="));
  if (!line) throw new Error(`sign-in set no session cookie (${response.status}: ${await response.text()})`);
  return line.split(";")[0].slice("np_session=".length);
}

interface Load {
  lcpMs: number;
  scripts: string[];
}

/** One cold load (a new browser context: empty cache and storage) of `route`, until `ready` is on the page. */
async function coldLoad(
  browser: Browser,
  url: string,
  route: string,
  ready: string,
  options: { cookie?: string; throttled: boolean },
): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  try {
    if (options.cookie) {
      await context.addCookies([{ name: "np_session", value: options.cookie, url }]);
    }
    const page: Page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    if (options.throttled) await cdp.send("Network.emulateNetworkConditions", THROTTLED);
    const scripts = new Set<string>();
    page.on("request", (request) => {
      if (request.resourceType() === "script") scripts.add(request.url());
    });
    await page.addInitScript(() => {
      const w = window as unknown as { __lcp: number };
      w.__lcp = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.__lcp = entry.startTime;
      }).observe({ type: "largest-contentful-paint", buffered: true });
    });
    await page.goto(`${url}${route}`, { waitUntil: "load" });
    await page.waitForSelector(ready, { timeout: 60_000 });
    // Scripts are counted until the network is idle (no request for 500 ms), so code a drawn page fetches
    // after its first paint counts too. The wait also lets the last LCP candidate be reported.
    await page.waitForLoadState("networkidle", { timeout: 60_000 });
    await page.waitForTimeout(500);
    const lcpMs = await page.evaluate(() => (window as unknown as { __lcp: number }).__lcp);
    return { lcpMs, scripts: [...scripts] };
  } finally {
    await context.close();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export async function runConsoleBench(log: (line: string) => void = console.log): Promise<ConsoleBenchResult> {
  // Not created here: the service makes it, with the permissions its embedded database (another user when
  // run as root) needs; mkdtemp's would keep that user out.
  const dataDir = () => path.join(tmpdir(), `nodeplane-bench-console-${randomBytes(6).toString("hex")}`);
  const dataDirs: string[] = [];
  let service: Started | null = null;
  try {
    // A fresh clone: neither build, no data.
    rmSync(distDir, { recursive: true, force: true });
    rmSync(path.join(repoRoot, SERVER_BUILD_DIR), { recursive: true, force: true });
    dataDirs.push(dataDir());
    const fresh = await npmStart(dataDirs[0]);
    log(`npm start, fresh clone (builds both, empty data directory): ready in ${fresh.readyMs.toFixed(0)} ms`);
    log(`  ${formatSteps(fresh.steps)}`);
    await fresh.stop();
    const restart = await npmStart(dataDirs[0]);
    service = restart;
    log(`npm start, restart (same data directory, builds current): ready in ${restart.readyMs.toFixed(0)} ms`);
    log(`  ${formatSteps(restart.steps)}`);
    const pages = process.env.BENCH_CONSOLE_STARTS_ONLY === "1" ? null : await measurePages(restart.url, log);
    await restart.stop();
    service = null;

    // The baseline: a first start with the builds current, on an empty data directory.
    ensureBuilt(repoRoot, log);
    await ensureServerBuilt(repoRoot, log);
    dataDirs.push(dataDir());
    const first = await npmStart(dataDirs[1]);
    log(
      `npm start, first start (empty data directory, builds current; the baseline): ready in ${first.readyMs.toFixed(0)} ms`,
    );
    log(`  ${formatSteps(first.steps)}`);
    await first.stop();

    return {
      startFreshMs: fresh.readyMs,
      startRestartMs: restart.readyMs,
      startFirstMs: first.readyMs,
      steps: { fresh: fresh.steps, restart: restart.steps, first: first.steps },
      pages,
    };
  } finally {
    await service?.stop().catch(() => undefined);
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** Initial JavaScript and LCP, against the service at `url`. */
async function measurePages(url: string, log: (line: string) => void): Promise<PagesResult> {
  let browser: Browser | null = null;
  try {
    browser = await chromium.launch({
      executablePath: ensureChromium(log),
      args: CHROMIUM_FLAGS,
    });
    const cookie = await sessionCookie(url);
    const signIn = await coldLoad(browser, url, "/sign-in", "input[type=password]", { throttled: false });
    const signInBytes = signIn.scripts.reduce((sum, script) => sum + gzipSize(script), 0);
    log(`sign-in: ${signIn.scripts.length} scripts, ${(signInBytes / 1024).toFixed(1)} kB gzip`);

    const listReady = '[data-screen="endpoints.list"] .np-table-row, [data-screen="endpoints.list"] .ant-empty';
    const throttled: Load[] = [];
    const unthrottled: Load[] = [];
    for (let i = 0; i < LOADS; i++) {
      throttled.push(await coldLoad(browser, url, "/endpoints", listReady, { cookie, throttled: true }));
      unthrottled.push(await coldLoad(browser, url, "/endpoints", listReady, { cookie, throttled: false }));
    }
    const listScripts = throttled[0].scripts;
    const listBytes = listScripts.reduce((sum, script) => sum + gzipSize(script), 0);
    log(`/endpoints: ${listScripts.length} scripts, ${(listBytes / 1024).toFixed(1)} kB gzip`);
    log(`/endpoints LCP at 10 Mbit/s, 40 ms: ${throttled.map((l) => l.lcpMs.toFixed(0)).join(", ")} ms`);
    log(`/endpoints LCP unthrottled:        ${unthrottled.map((l) => l.lcpMs.toFixed(0)).join(", ")} ms`);
    return {
      signInJsGzipBytes: signInBytes,
      listJsGzipBytes: listBytes,
      signInScripts: signIn.scripts.length,
      listScripts: listScripts.length,
      lcpThrottledMs: throttled.map((l) => l.lcpMs),
      lcpUnthrottledMs: unthrottled.map((l) => l.lcpMs),
    };
  } finally {
    await browser?.close().catch(() => undefined);
  }
}

export { median };

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runConsoleBench();
  console.log(JSON.stringify({ ...r, lcpThrottledMedianMs: r.pages ? median(r.pages.lcpThrottledMs) : null }, null, 2));
}
