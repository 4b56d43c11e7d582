/**
 * `npm test`: the contract, unit, API and end-to-end suites, each a vitest project run in a child process
 * with a JSON report; prints each suite's counts and ends with one line of totals.
 *
 * The end-to-end suite mostly waits (on its services, blocks, the browser) and the contract and unit
 * suites leave a core idle a third of the time: e2e runs beside those two, its output kept in
 * test-results/e2e-output.log and printed when it ends. The API suite runs alone after them: its tests
 * time engine restarts, leases and tip-following. docs/decisions/0503-e2e-beside-unit.md.
 *
 *   npm test                      all suites
 *   npm test -- --only api        one suite (repeat the flag or use commas for several: --only unit,api)
 *   npm test -- --only api kv     only the files of that suite whose path contains `kv` (vitest's file
 *                                 filter; several words match any of them; without --only, every suite
 *                                 with a matching file runs)
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
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

interface SuiteRun {
  counts: Counts;
  notes: string[];
}

/**
 * Runs one suite's vitest. `quietLog`: its output goes to that file (printed when it ends) instead of
 * the terminal, for a suite that runs beside another.
 */
async function runSuite(suite: Suite, filters: string[], quietLog?: string): Promise<SuiteRun> {
  const reportFile = join(repoRoot, "test-results", `vitest-${suite}.json`);
  rmSync(reportFile, { force: true });
  const args = [
    join(repoRoot, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "--project",
    suite,
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
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    stdio: quietLog ? ["ignore", "pipe", "pipe"] : "inherit",
    env,
  });
  if (quietLog) {
    const out = createWriteStream(quietLog);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  const status = await new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (quietLog) {
    console.log(`\n━━ ${suite} (it ran beside the others; its output, from ${relative(repoRoot, quietLog)}) ━━`);
    console.log(readFileSync(quietLog, "utf8"));
  }
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
  if (status !== 0 && counts.failed === 0) {
    // vitest failed without a failing test to show for it: global setup, an unhandled error, a crash.
    counts.failed = 1;
    notes.push(`vitest exited with ${status} (see its output above)`);
  }
  const files = report ? `, ${plural(report.testResults.length, "file")}` : "";
  console.log(`\n${suite}: ${formatCounts(counts)}${files}, ${seconds} s`);
  for (const note of notes) console.log(`  ${note}`);
  return { counts, notes };
}

/** What the end-to-end suite needs before it starts: a browser and a fresh build. */
function prepareE2E(): string | null {
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

/** What a suite that is not run says in the summary, with its one failure when it should have run. */
type Outcome = SuiteRun | { skipped: string } | { notRun: string };

async function main(): Promise<number> {
  let chosen: Choice;
  try {
    chosen = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  mkdirSync(join(repoRoot, "test-results"), { recursive: true });

  const matchingFiles = (suite: Suite): string | null => {
    const files = testFiles(join(repoRoot, "tests", suite));
    // vitest's filter: a file runs when its path contains one of the words.
    const matching = files.filter(
      (file) => !chosen.filters.length || chosen.filters.some((word) => file.includes(word)),
    );
    if (matching.length > 0) return null;
    return files.length ? `no test file matches ${chosen.filters.join(" ")}` : "no test files";
  };
  const run = async (suite: Suite, quietLog?: string): Promise<Outcome> => {
    const none = matchingFiles(suite);
    if (none) {
      console.log(`${suite}: ${none}`);
      return { skipped: none };
    }
    if (suite === "e2e") {
      const problem = prepareE2E();
      if (problem) {
        console.log(`e2e: not run: ${problem}`);
        return { notRun: problem };
      }
    }
    if (!quietLog) console.log(`\n━━ ${suite} ━━`);
    return runSuite(suite, chosen.filters, quietLog);
  };

  const outcomes = new Map<Suite, Outcome>();
  const beside =
    chosen.suites.includes("e2e") && chosen.suites.some((suite) => suite === "contract" || suite === "unit");
  const e2e = beside ? run("e2e", join(repoRoot, "test-results", "e2e-output.log")) : null;
  if (e2e) console.log("\n━━ e2e runs beside contract and unit; its output follows when it ends ━━");
  for (const suite of chosen.suites.filter((each) => each === "contract" || each === "unit"))
    outcomes.set(suite, await run(suite));
  if (e2e) outcomes.set("e2e", await e2e);
  for (const suite of chosen.suites.filter((each) => !outcomes.has(each))) outcomes.set(suite, await run(suite));

  const total: Counts = { passed: 0, failed: 0, skipped: 0 };
  console.log("\n━━ summary ━━");
  for (const suite of chosen.suites) {
    const outcome = outcomes.get(suite);
    if (!outcome) continue;
    if ("skipped" in outcome) console.log(`${suite.padEnd(9)} ${outcome.skipped}`);
    else if ("notRun" in outcome) {
      console.log(`${suite.padEnd(9)} not run (${outcome.notRun.split("\n")[0]})`);
      total.failed += 1;
    } else {
      console.log(`${suite.padEnd(9)} ${formatCounts(outcome.counts)}`);
      // The names of what failed go in the summary, where a CI log cut to its end still shows them.
      for (const note of outcome.notes) console.log(`  ${note}`);
      total.passed += outcome.counts.passed;
      total.failed += outcome.counts.failed;
      total.skipped += outcome.counts.skipped;
    }
  }
  if (total.passed + total.failed === 0) console.log("No test ran.");
  console.log(formatCounts(total));
  return total.failed > 0 || total.passed + total.failed === 0 ? 1 : 0;
}

process.exitCode = await main();
