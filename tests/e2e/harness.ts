/**
 * End-to-end harness: the built service as a child process (as `npm start` runs it) and Debian's
 * Chromium driven by playwright-core.
 *
 *   const e2e = useE2E();                           // beforeAll: service + browser; afterAll: cleanup
 *   test("signs in", async () => {
 *     const page = await e2e.newPage();             // fresh context (no cookies), baseURL = service
 *     await page.goto("/");
 *     await screenshot(page, "sign-in");            // test-results/screenshots/sign-in.png, with E2E_SCREENSHOTS=1
 *   });
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  type WriteStream,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { TEST_EGRESS_ALLOW } from "../support/egress.ts";
import { freePort } from "../support/ports.ts";
import { ensureBuilt, repoRoot } from "./harness-build.ts";
import { CHROMIUM_FLAGS, ensureChromium } from "./harness-chromium.ts";

export { CHROMIUM_FLAGS, ensureBuilt, ensureChromium };

/** The demo sign-in the service seeds (`NODEPLANE_DEMO_PASSWORD`). */
export const DEMO_PASSWORD = "e2e-demo-password";

const resultsDir = join(repoRoot, "test-results");

export interface Service {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  dataDir: string;
  /** The database it was given (`databaseUrl`), or null: its embedded server in `dataDir`. */
  databaseUrl: string | null;
  demoPassword: string;
  /** The file holding the service's output. */
  logFile: string;
  /** The last lines the service printed. */
  recentOutput(): string;
  stop(): Promise<void>;
}

export interface StartServiceOptions {
  /** Extra environment for the service. */
  env?: Record<string, string>;
  /** Use this PostgreSQL server; by default the service starts its own embedded one in its data dir. */
  databaseUrl?: string;
  /** How long to wait for /healthz (the first start initialises a database). */
  startTimeoutMs?: number;
}

let serviceCount = 0;

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => resolveExit(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolveExit(true);
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid) return;
  try {
    // The service runs in its own process group (detached), so this reaches what it started too
    // (its PostgreSQL server, its chain node) and nothing else.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Starts the service on a free port with a temporary data directory, as `node server/start.mjs`: from the
 * server bundle when it is current (`npm test` builds it before this suite), else from the sources through tsx.
 */
export async function startService(options: StartServiceOptions = {}): Promise<Service> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "nodeplane-e2e-"));
  // The embedded PostgreSQL server runs as the `postgres` user and must reach its folder inside.
  chmodSync(dataDir, 0o755);
  mkdirSync(resultsDir, { recursive: true });
  serviceCount += 1;
  const logFile = join(resultsDir, `e2e-service-${process.pid}-${serviceCount}.log`);
  const log: WriteStream = createWriteStream(logFile);
  const recent: string[] = [];

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    NODEPLANE_DATA_DIR: dataDir,
    NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
    NODEPLANE_EGRESS_ALLOW: TEST_EGRESS_ALLOW,
    ...options.env,
  };
  delete env.DATABASE_URL;
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;

  const child = spawn(process.execPath, ["server/start.mjs"], {
    cwd: repoRoot,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const onOutput = (chunk: Buffer) => {
    log.write(chunk);
    recent.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (recent.length > 200) recent.splice(0, recent.length - 200);
  };
  child.stdout?.on("data", onOutput);
  child.stderr?.on("data", onOutput);
  const url = `http://127.0.0.1:${port}`;

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    signalGroup(child, "SIGTERM");
    if (!(await waitForExit(child, 15_000))) {
      signalGroup(child, "SIGKILL");
      await waitForExit(child, 5_000);
    }
    // Whatever the service started and did not stop within the grace period.
    signalGroup(child, "SIGKILL");
    log.end();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const recentOutput = () => recent.join("\n");

  const deadline = Date.now() + (options.startTimeoutMs ?? 180_000);
  let lastError = "no answer yet";
  while (true) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(
        `The service exited (${child.exitCode ?? child.signalCode}) before answering /healthz. Its output:\n${recentOutput()}`,
      );
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) break;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `The service did not answer ${url}/healthz in time (${lastError}). Its output:\n${recentOutput()}`,
      );
    }
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
  }

  const databaseUrl = options.databaseUrl ?? null;
  return { url, port, dataDir, databaseUrl, demoPassword: DEMO_PASSWORD, logFile, recentOutput, stop };
}

export interface LaunchedBrowser {
  browser: Browser;
  /** Its profile directory ("" for the suite's browser, which its globalSetup owns). */
  userDataDir: string;
  close(): Promise<void>;
}

/**
 * The suite's Chromium (tests/e2e/browser-server.ts, the `e2e` project's globalSetup), connected to, or
 * else one launched for this file alone. Closing it closes only what this file opened in it.
 */
async function suiteOrOwnBrowser(): Promise<LaunchedBrowser> {
  let endpoint: string | undefined;
  try {
    endpoint = inject("chromiumEndpoint");
  } catch {
    // Outside a vitest worker there is no suite browser.
  }
  if (!endpoint) return launchBrowser();
  const browser = await chromium.connect(endpoint, { timeout: 60_000 });
  return {
    browser,
    userDataDir: "",
    async close() {
      await browser.close().catch(() => undefined);
    },
  };
}

/** Launches Chromium with exactly CHROMIUM_FLAGS and a fresh profile. */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  const executablePath = ensureChromium();
  const userDataDir = mkdtempSync(join(tmpdir(), "nodeplane-chromium-"));
  const browser = await chromium.launch({
    executablePath,
    // Playwright's own defaults are replaced by our flags; it still needs its pipe to drive the browser.
    ignoreDefaultArgs: true,
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${userDataDir}`, "--remote-debugging-pipe"],
    timeout: 60_000,
  });
  return {
    browser,
    userDataDir,
    async close() {
      await browser.close().catch(() => undefined);
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until the screen has its heading and nothing on it is still loading (a chart may keep loading).
 * Network quiet alone is not enough: a view below another asks for its data once the one above has drawn.
 */
export async function settle(page: Page) {
  await page.locator("h1").first().waitFor();
  const loading = page.locator(".ant-skeleton, .ant-spin-spinning, .ant-card-loading-content");
  for (let waited = 0; waited < 10_000 && (await loading.count()) > 0; waited += 200) await page.waitForTimeout(200);
}

/**
 * Goes to `route` the way a link in the console does (the router's history, no page load), so the page
 * keeps its loaded scripts — the console's and axe's — and waits for the new screen to settle. The
 * headings on screen before are marked, so the wait is for the new screen's heading, not the old one.
 */
export async function navigateInApp(page: Page, route: string) {
  await page.evaluate((route) => {
    for (const heading of document.querySelectorAll("h1")) heading.setAttribute("data-e2e-left", "");
    const idx = ((history.state as { idx?: number } | null)?.idx ?? 0) + 1;
    history.pushState({ usr: null, key: Math.random().toString(36).slice(2, 10), idx }, "", route);
    dispatchEvent(new PopStateEvent("popstate", { state: history.state }));
  }, route);
  await page.locator("h1:not([data-e2e-left])").first().waitFor();
  await settle(page);
}

/**
 * Signs in through the form as a person does. Signed in is when the form has gone: the sign-in page has
 * its own h1, and the main navigation is a drawer at 390 px, so neither tells.
 */
export async function signInWithForm(page: Page, email = "demo@nodeplane.local", password = DEMO_PASSWORD) {
  await page.goto("/");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.getByLabel("Password").waitFor({ state: "detached" });
}

/** Where screenshots go: `test-results/screenshots`. */
export const screenshotsDir = join(resultsDir, "screenshots");

/**
 * Whether the journeys' screenshots are taken (`E2E_SCREENSHOTS=1`). They are for people to look at and
 * no test reads them; a full-page PNG costs Chromium a tenth of a suite's CPU, so a plain run takes them
 * only of a failed test's pages (decision 1880).
 */
export const screenshotsWanted = process.env.E2E_SCREENSHOTS === "1";

/** Saves a full-page screenshot to `test-results/screenshots/<name>.png` and returns its path. */
async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotsDir, { recursive: true });
  const file = join(screenshotsDir, `${name.replace(/[^A-Za-z0-9._-]+/g, "-")}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * A screenshot of the page as it is, to be looked at: taken when `E2E_SCREENSHOTS=1` (returns its path),
 * else not (returns null).
 */
export async function screenshot(page: Page, name: string): Promise<string | null> {
  return screenshotsWanted ? saveScreenshot(page, name) : null;
}

/** A screenshot taken whatever `E2E_SCREENSHOTS` says: of a page a test is about to fail on. */
export function failureScreenshot(page: Page, name: string): Promise<string> {
  return saveScreenshot(page, name);
}

export interface E2E {
  readonly service: Service;
  readonly browser: Browser;
  /** Errors the pages of this file threw or logged to the console (`pageerror`, console.error). */
  readonly pageErrors: string[];
  /** A page in a fresh context (no cookies) whose relative URLs go to the service. */
  newPage(options?: { viewport?: { width: number; height: number } }): Promise<Page>;
}

/** A client of the service's database: the one it was given, else its embedded one (end it when done). */
export async function serviceDatabase(service: Service): Promise<pg.Client> {
  if (service.databaseUrl) {
    const client = new pg.Client(service.databaseUrl);
    await client.connect();
    return client;
  }
  const password = readFileSync(join(service.dataDir, "postgres-password.secret"), "utf8").trim();
  const port = readFileSync(join(service.dataDir, "postgres", "postmaster.pid"), "utf8")
    .split("\n")[3]
    .trim();
  const client = new pg.Client(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/nodeplane`);
  await client.connect();
  return client;
}

/** Ends the demo owner's billing period now, so the service's billing clock closes it into an invoice. */
export async function endDemoBillingPeriod(service: Service): Promise<void> {
  const db = await serviceDatabase(service);
  try {
    await db.query(
      "update subscriptions set current_period_end = now() where account_id = (select account_id from memberships m join users u on u.id = m.user_id where u.email = $1 limit 1)",
      ["demo@nodeplane.local"],
    );
  } finally {
    await db.end();
  }
}

/**
 * One service per test file, started before its tests and stopped after, and the file's contexts in the
 * suite's browser (suiteOrOwnBrowser), closed after. The service uses a fresh database of its own on the
 * suite's PostgreSQL server (the `e2e` project's globalSetup, tests/support/database.ts), a copy of its
 * migrated template, which it seeds as on a first start: no initdb, server start or migration per file. `databaseUrl` names another.
 */
export function useE2E(options: StartServiceOptions = {}): E2E {
  let database: TestDatabase | undefined;
  let service: Service | undefined;
  let launched: LaunchedBrowser | undefined;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      database = await createTestDatabase();
      databaseUrl = database.url;
    }
    service = await startService({ ...options, databaseUrl });
    launched = await suiteOrOwnBrowser();
  });
  // A failed test leaves a picture of each page the file has open, with or without E2E_SCREENSHOTS.
  afterEach(async (context) => {
    if (context.task.result?.state !== "fail") return;
    const file = context.task.file.name.replace(/^.*\/|\.test\.ts$/g, "");
    const test = `${file}-${context.task.name}`.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 200);
    let n = 0;
    for (const page of contexts.flatMap((each) => each.pages())) {
      n += 1;
      await failureScreenshot(page, `failed-${test}-${n}`).catch(() => undefined);
    }
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await launched?.close();
    await service?.stop();
    await database?.drop();
  });

  return {
    get service(): Service {
      if (!service) throw new Error("the service is not started: use e2e.service inside a test or hook");
      return service;
    },
    get browser(): Browser {
      if (!launched) throw new Error("the browser is not started: use e2e.browser inside a test or hook");
      return launched.browser;
    },
    pageErrors,
    async newPage(pageOptions = {}) {
      if (!service || !launched) throw new Error("useE2E: newPage() called before beforeAll ran");
      const context = await launched.browser.newContext({
        baseURL: service.url,
        viewport: pageOptions.viewport ?? { width: 1440, height: 900 },
        // The console turns antd's and the charts' animations off for it: a closing dropdown or a
        // fading loading icon is then never caught half-way (e.g. a button read as "loading Run").
        reducedMotion: "reduce",
      });
      contexts.push(context);
      const page = await context.newPage();
      page.on("pageerror", (error) => pageErrors.push(`pageerror: ${error.message}`));
      page.on("console", (message) => {
        if (message.type() === "error") pageErrors.push(`console.error: ${message.text()}`);
      });
      return page;
    },
  };
}

/** axe-core, for the accessibility checks of the pages a test opens. */
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface Violation {
  route: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Runs axe on the page as it is and returns its violations of every impact (minor included). */
export async function axeViolations(page: Page, route: string): Promise<Violation[]> {
  // Evaluated through the debugging protocol, not added as a <script>: the console's CSP refuses inline scripts.
  if (!(await page.evaluate(() => "axe" in window))) {
    await page.evaluate(axeSource);
    // Nothing here reads a node's HTML: without it axe does not take the outerHTML of every element a
    // rule looks at (passes included), which is O(page) each. Every rule still runs on every node.
    await page.evaluate(() =>
      (window as unknown as { axe: { configure: (spec: object) => void } }).axe.configure({ noHtml: true }),
    );
  }
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<unknown> } }).axe;
    // Every rule still runs and every violating node is reported; only the passes and the incomplete
    // results are cut to one node each, which spares axe building a selector for each of their nodes.
    return (await axe.run(document, { resultTypes: ["violations"] })) as {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
    };
  });
  return results.violations.map((violation) => ({
    route,
    id: violation.id,
    impact: String(violation.impact),
    help: violation.help,
    targets: violation.nodes.slice(0, 5).map((node) => node.target.join(" ")),
  }));
}

/**
 * The service's environment for one local chain (a fresh anvil mining a block every second) serving
 * ethereum-mainnet only, its networks file in a folder of its own.
 */
export function oneLocalChainEnv(name: string): Record<string, string> {
  const networksFile = join(mkdtempSync(join(tmpdir(), `nodeplane-e2e-${name}-`)), "networks.json");
  writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-mainnet"], blockTimeSeconds: 1 } }));
  return { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile };
}

/** Picks an option of an antd select found by its form label. */
export async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label, { exact: true }).click();
  const dropdown = page.locator(".ant-select-dropdown:visible");
  await dropdown.waitFor();
  const item = dropdown.locator(".ant-select-item-option").getByText(option, { exact: true });
  // The option list is virtual: only the options near the top (or the chosen one) are rendered, so
  // scroll it with the wheel until the option is there.
  if (!(await item.count())) {
    await dropdown.locator(".ant-select-item-option").first().hover();
    for (let step = 0; step < 20 && !(await item.count()); step++) await page.mouse.wheel(0, 64);
  }
  await item.click();
}

/** Reloads every `intervalMs` until `test` holds (deliveries arrive, metrics are flushed every few seconds). */
export async function reloadUntil(
  page: Page,
  test: () => Promise<boolean>,
  { timeoutMs = 60_000, intervalMs = 2_000 }: { timeoutMs?: number; intervalMs?: number } = {},
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await test()) return;
    await page.waitForTimeout(intervalMs);
    await page.reload();
    await page.waitForLoadState("networkidle");
    await settle(page);
  }
  throw new Error("timed out waiting for the page to change");
}
