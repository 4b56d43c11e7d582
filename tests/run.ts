/**
 * `npm test`: the contract, unit, API and end-to-end suites in that order, each a vitest project run
 * in a child process with a JSON report; prints each suite's counts and ends with one line of totals.
 *
 *   npm test                      all suites
 *   npm test -- --only api        one suite (repeat the flag or use commas for several: --only unit,api)
 *   npm test -- --only api kv     only the files of that suite whose path contains `kv` (vitest's file
 *                                 filter; several words match any of them; without --only, every suite
 *                                 with a matching file runs)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { ensureServerBuilt, serverBuildStaleness } from "../server/platform/server-build.mjs";
import { buildStaleness, ensureBuilt, repoRoot } from "./e2e/harness-build.ts";
import { ensureChromium } from "./e2e/harness-chromium.ts";

const suites = ["contract", "unit", "api", "e2e"] as const;
type Suite = (typeof suites)[number];

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/** The parts of vitest's JSON report read here. */
interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { status: string; fullName: string; failureMessages?: string[] }[];
  }[];
}

interface Choice {
  suites: Suite[];
  /** Words a test file's path must contain (any of them), passed on to vitest; none: every file. */
  filters: string[];
}

const usage = `Usage: npm test [-- [--only ${suites.join("|")}] [file filter...]]`;

function parseArgs(argv: string[]): Choice {
  const chosen: Suite[] = [];
  const filters: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    let value: string | undefined;
    if (arg === "--only") value = argv[++i];
    else if (arg.startsWith("--only=")) value = arg.slice("--only=".length);
    else if (arg.startsWith("-")) throw new Error(`Unknown argument ${arg}. ${usage}`);
    else {
      filters.push(arg);
      continue;
    }
    for (const name of (value ?? "").split(",").filter(Boolean)) {
      if (!(suites as readonly string[]).includes(name)) {
        throw new Error(`--only takes ${suites.join("|")}, got ${JSON.stringify(name)}`);
      }
      chosen.push(name as Suite);
    }
    if (!value) throw new Error(`--only needs a suite: ${suites.join("|")}`);
  }
  return { suites: chosen.length ? suites.filter((suite) => chosen.includes(suite)) : [...suites], filters };
}

/** The test files under `dir`, as paths from the repository root. */
function testFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return /\.test\.tsx?$/.test(entry.name) ? [relative(repoRoot, path)] : [];
  });
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function formatCounts(counts: Counts): string {
  const line = `${counts.passed} passed, ${counts.failed} failed`;
  return counts.skipped > 0 ? `${line}, ${counts.skipped} skipped` : line;
}

function runSuite(suite: Suite, filters: string[]): { counts: Counts; notes: string[] } {
  const reportFile = join(repoRoot, "test-results", `vitest-${suite}.json`);
  rmSync(reportFile, { force: true });
  const args = [
    join(repoRoot, "node_modules", "vitest", "vitest.mjs"),
    "run",
    // A suite's projects: the unit suite is two (unit, unit-dom; see vitest.config.ts).
    `--project=${suite}*`,
    "--passWithNoTests",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${reportFile}`,
    ...filters,
  ];
  const started = Date.now();
  // The pinned AWS SDK warns, once per process, that later releases will need Node 22; test
  // output gets one such paragraph per test file otherwise.
  const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...process.env };
  const result = spawnSync(process.execPath, args, { cwd: repoRoot, stdio: "inherit", env });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const notes: string[] = [];
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };

  let report: JsonReport | undefined;
  if (existsSync(reportFile)) report = JSON.parse(readFileSync(reportFile, "utf8")) as JsonReport;
  if (report) {
    counts.passed = report.numPassedTests;
    counts.failed = report.numFailedTests;
    counts.skipped = report.numPendingTests + report.numTodoTests;
    // A file that failed without a failing test (it did not load, or a hook threw) counts as one failure.
    for (const file of report.testResults) {
      for (const test of file.assertionResults.filter((each) => each.status === "failed")) {
        const reason = (test.failureMessages?.[0] ?? "").split("\n")[0].slice(0, 200);
        notes.push(`failed: ${relative(repoRoot, file.name)} > ${test.fullName}: ${reason}`);
      }
      if (file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed")) {
        counts.failed += 1;
        notes.push(`${relative(repoRoot, file.name)} failed outside any test: ${(file.message ?? "").split("\n")[0]}`);
      }
    }
  }
  if (result.status !== 0 && counts.failed === 0) {
    // vitest failed without a failing test to show for it: global setup, an unhandled error, a crash.
    counts.failed = 1;
    notes.push(`vitest exited with ${result.status ?? result.signal} (see its output above)`);
  }
  const files = report ? `, ${plural(report.testResults.length, "file")}` : "";
  console.log(`\n${suite}: ${formatCounts(counts)}${files}, ${seconds} s`);
  for (const note of notes) console.log(`  ${note}`);
  return { counts, notes };
}

/**
 * What the end-to-end suite needs before it starts besides the server bundle: a browser and a fresh
 * console build.
 */
async function prepareE2E(): Promise<string | null> {
  try {
    ensureChromium();
  } catch (error) {
    return (error as Error).message;
  }
  if (buildStaleness()) {
    try {
      ensureBuilt();
    } catch (error) {
      return `npm run build failed: ${(error as Error).message.split("\n")[0]}`;
    }
  }
  return null;
}

/**
 * A current server bundle, which the API suite's service processes and stream engine children and the
 * end-to-end suite's services then start from (~3 CPU-s less a start than compiling through tsx).
 */
async function prepareServerBundle(): Promise<string | null> {
  try {
    if (serverBuildStaleness(repoRoot)) await ensureServerBuilt(repoRoot);
  } catch (error) {
    return `the server bundle did not build: ${(error as Error).message.split("\n")[0]}`;
  }
  return null;
}

async function main(): Promise<number> {
  let chosen: Choice;
  try {
    chosen = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  mkdirSync(join(repoRoot, "test-results"), { recursive: true });
  const total: Counts = { passed: 0, failed: 0, skipped: 0 };
  const summary: string[] = [];

  for (const suite of chosen.suites) {
    console.log(`\n━━ ${suite} ━━`);
    const files = testFiles(join(repoRoot, "tests", suite));
    // vitest's filter: a file runs when its path contains one of the words.
    const matching = files.filter(
      (file) => !chosen.filters.length || chosen.filters.some((word) => file.includes(word)),
    );
    if (matching.length === 0) {
      const none = files.length ? `no test file matches ${chosen.filters.join(" ")}` : "no test files";
      console.log(`${suite}: ${none}`);
      summary.push(`${suite.padEnd(9)} ${none}`);
      continue;
    }
    if (suite === "api" || suite === "e2e") {
      const problem = (await prepareServerBundle()) ?? (suite === "e2e" ? await prepareE2E() : null);
      if (problem) {
        console.log(`${suite}: not run: ${problem}`);
        summary.push(`${suite.padEnd(9)} not run (${problem.split("\n")[0]})`);
        total.failed += 1;
        continue;
      }
    }
    const { counts, notes } = runSuite(suite, chosen.filters);
    summary.push(`${suite.padEnd(9)} ${formatCounts(counts)}`);
    // The names of what failed go in the summary, where a CI log cut to its end still shows them.
    for (const note of notes) summary.push(`  ${note}`);
    total.passed += counts.passed;
    total.failed += counts.failed;
    total.skipped += counts.skipped;
  }

  console.log("\n━━ summary ━━");
  for (const line of summary) console.log(line);
  if (total.passed + total.failed === 0) console.log("No test ran.");
  console.log(formatCounts(total));
  return total.failed > 0 || total.passed + total.failed === 0 ? 1 : 0;
}

process.exitCode = await main();
