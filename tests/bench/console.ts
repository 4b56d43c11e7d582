/**
 * The console delivery benchmark (`npm run bench -- console`, or `node --import tsx tests/bench/console.ts`).
 *
 * - Time to ready of `npm start` (process start to /healthz answering): a first start on an empty data
 *   directory, a second start on the same one, both reusing the current build; beside them, the baseline
 *   of a start that must rebuild the console (what every start did before builds were reused).
 * - Initial JavaScript of the sign-in page and of the first list screen (/endpoints, signed in): every
 *   script Chromium fetched until the page was drawn, counted at its gzip size (the build's .gz copy).
 * - Largest contentful paint of /endpoints, signed in, cold cache, in Chromium at 10 Mbit/s and 40 ms
 *   (CDP Network.emulateNetworkConditions, Lighthouse's desktop network): median of 5 loads, beside the
 *   same loads unthrottled.
 *
 * Runs `npm start` itself on free ports with a throw-away data directory, so it takes ~1–2 minutes.
 * BENCH_CONSOLE_STARTS_ONLY=1 measures the three starts only (no browser), in ~30 s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { BUILD_STAMP, ensureBuilt } from "../../server/platform/console-build.ts";
import { ensureServerBuilt } from "../../server/platform/server-build.mjs";
import { ensureChromium } from "../e2e/harness-chromium.ts";
import { freePort } from "../support/ports.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const distDir = path.join(repoRoot, "dist");
const DEMO_EMAIL = "demo@nodeplane.local";
const DEMO_PASSWORD = "bench-demo-password";
const LOADS = 5;
/** Lighthouse's desktop throttling: 10 Mbit/s both ways, 40 ms round trip. */
const THROTTLED = { offline: false, latency: 40, downloadThroughput: 1_250_000, uploadThroughput: 1_250_000 };

export interface ConsoleBenchResult {
  startFirstMs: number;
  startSecondMs: number;
  /** The baseline: a start with a stale build, which rebuilds the console first. */
  startRebuildMs: number;
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
  stop(): Promise<void>;
}

/** `npm start` in its own process group, timed from spawn to the first 200 from /healthz. */
async function npmStart(dataDir: string): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
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
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
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
    async stop() {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
      await exited;
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
    // Let the last candidate be reported (LCP settles after the paint that drew it).
    await page.waitForTimeout(1000);
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
  ensureBuilt(repoRoot, log);
  await ensureServerBuilt(repoRoot, log);
  // Not created here: the service makes it, with the permissions its embedded database (another user when
  // run as root) needs; mkdtemp's would keep that user out.
  const dataDir = path.join(tmpdir(), `nodeplane-bench-console-${randomBytes(6).toString("hex")}`);
  let service: Started | null = null;
  try {
    const first = await npmStart(dataDir);
    log(`npm start, first start (empty data directory, current build): ready in ${first.readyMs.toFixed(0)} ms`);
    await first.stop();
    const second = await npmStart(dataDir);
    service = second;
    log(`npm start, second start (same data directory, current build): ready in ${second.readyMs.toFixed(0)} ms`);
    const pages = process.env.BENCH_CONSOLE_STARTS_ONLY === "1" ? null : await measurePages(second.url, log);
    await second.stop();
    service = null;

    // The baseline: the same start with a build that no longer matches its inputs.
    rmSync(path.join(distDir, BUILD_STAMP), { force: true });
    const rebuild = await npmStart(dataDir);
    log(`npm start with a stale build (rebuilds, the baseline): ready in ${rebuild.readyMs.toFixed(0)} ms`);
    await rebuild.stop();

    return { startFirstMs: first.readyMs, startSecondMs: second.readyMs, startRebuildMs: rebuild.readyMs, pages };
  } finally {
    await service?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Initial JavaScript and LCP, against the service at `url`. */
async function measurePages(url: string, log: (line: string) => void): Promise<PagesResult> {
  let browser: Browser | null = null;
  try {
    browser = await chromium.launch({
      executablePath: ensureChromium(log),
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
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
