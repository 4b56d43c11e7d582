import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

// vitest runs one test file per core but one, leaving a core to its main process: on the two-core CI
// machine that is ONE file at a time. The main process idles once files are collected, and API files
// mostly wait on PostgreSQL and the network, so these suites run more files than that.
const cores = availableParallelism();

// One project per suite so each can be run alone (`vitest run --project api`) and `tests/run.ts` can
// report per-suite counts. Unit tests run in node; a test that needs a DOM is a `.tsx` file (project unit-dom).
export default defineConfig({
  resolve: {
    alias: [
      // graphql 16 ships both CommonJS (`main`) and ES modules (`module`), and checks schema objects
      // with instanceof. Packages loaded by Node (mercurius, graphql-armor) get the CommonJS build;
      // Vite would hand our sources the ES build, a second copy ("Cannot find type Query"). Give our
      // sources the same build Node gives everyone else.
      { find: /^graphql$/, replacement: require.resolve("graphql") },
    ],
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "contract",
          include: ["tests/contract/**/*.test.{ts,tsx}"],
          environment: "node",
          // Its files read and compile declarations on one core at a time otherwise (0.9 of 2 cores used).
          maxWorkers: Math.max(2, cores),
        },
      },
      {
        extends: true,
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.ts"],
          environment: "node",
          // The two unit projects run as one group of files (vitest wants their maxWorkers equal): two workers
          // used 1.2 of two cores, the sandbox and chain files waiting on their processes.
          maxWorkers: Math.max(3, cores),
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          // The unit suite's DOM files (`.tsx`, each with `// @vitest-environment jsdom`): `npm test -- --only
          // unit` runs both unit projects (`vitest run --project 'unit*'`).
          name: "unit-dom",
          include: ["tests/unit/**/*.test.tsx"],
          environment: "jsdom",
          maxWorkers: Math.max(3, cores),
          // Rendering a screen in jsdom takes 1–3 s here and twice that on a loaded two-core CI
          // machine: vitest's 5 s default failed one such test in CI without a fault in the product.
          testTimeout: 20_000,
          // These files share their workers' loaded modules, as the API suite's do: each loaded React, antd
          // and the renderer again otherwise (~1.5 CPU-s a file). The node files stay isolated: the sandbox
          // tests share its processes through module state on purpose. The selector caches lose jsdom's
          // bound (the files' CPU more than halved; see the file).
          isolate: false,
          setupFiles: [
            "tests/support/env-per-file.ts",
            "tests/support/jsdom-selector-cache.ts",
            "tests/support/dom-wait.ts",
          ],
        },
      },
      {
        extends: true,
        test: {
          name: "api",
          include: ["tests/api/**/*.test.{ts,tsx}"],
          environment: "node",
          // One PostgreSQL server for the whole run; each file makes its own database on it.
          globalSetup: ["tests/support/database.ts"],
          // A file's service is built, used and closed within the file, and no domain keeps state in its
          // module (decision 0310): files share their workers' loaded modules instead of loading the
          // service again each (~0.7 s a file). What a file sets in process.env is put back after it.
          isolate: false,
          setupFiles: ["tests/support/env-per-file.ts"],
          // Four files side by side were faster (148 against 165 s) but made answer times tests measure
          // (endpoint-metrics' 60 ms answers) take 156 ms: three.
          maxWorkers: Math.max(3, cores),
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["tests/e2e/**/*.test.{ts,tsx}"],
          environment: "node",
          // One PostgreSQL server for the suite, as for the API suite: each file's service gets its own
          // database on it instead of an initdb and a server start of its own. One Chromium too: each
          // file connects and opens its own contexts instead of launching one.
          globalSetup: ["tests/support/database.ts", "tests/e2e/browser-server.ts"],
          // Each file starts its own service and browser. A journey mostly waits (on blocks, deliveries,
          // the page): two files side by side keep the two cores busy, where one left them three-quarters idle.
          maxWorkers: 2,
          // expect.poll waits 1 s by default: a screen reached by a click (its chunk loaded, its query
          // answered) took longer with the two cores busy (functions' Logs tab failed so). Passing polls wait no longer.
          expect: { poll: { timeout: 10_000 } },
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
