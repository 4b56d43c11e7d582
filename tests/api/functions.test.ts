import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn, signUp, type TestUser } from "../support/api.ts";
import type { VariablesOf } from "../support/operations.ts";
import {
  blockNumbers,
  DEMO_PASSWORD,
  NETWORK,
  type StreamsTestApp,
  startStreamsAppAsOwner,
  waitFor,
} from "./streams-harness.ts";

// Functions and FUNCTION destinations: the functions runtime runs an account's code on what its
// streams deliver, records each run, and never runs another account's function.

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ blocks: 20 }));
});
afterAll(async () => {
  await t?.close();
});

const FUNCTION_FIELDS = "id name description kind code limits { timeout }";
const ACTIVATION_FIELDS =
  "id activationSource version streamId network dataset blockNumber duration memory memoryLimit billable userData success size result error errorKind logs { level message }";

const counter = `async function main(params) {
  console.log("batch " + params.metadata.batch_start_range + "-" + params.metadata.batch_end_range);
  return { blocks: params.data.map((b) => parseInt(b.number, 16)) };
}`;

async function createFunction(user: TestUser, input: Record<string, unknown>) {
  return user.client.gql<{ createFunction: { id: string; name: string; limits: { timeout: number } } }>(
    `mutation($input: CreateFunctionInput!) { createFunction(input: $input) { ${FUNCTION_FIELDS} } }`,
    { input },
  );
}

interface Activation {
  id: string;
  activationSource: string;
  version: number;
  streamId: string | null;
  blockNumber: number | null;
  duration: number;
  memory: number;
  memoryLimit: number;
  billable: number;
  userData: unknown;
  success: boolean;
  size: number;
  result: string | null;
  error: string | null;
  errorKind: string | null;
  logs: { level: string; message: string }[];
}

async function history(user: TestUser, id: string) {
  const { functionHistory } = await user.client.gqlOk<{
    functionHistory: { edges: { node: Activation }[] };
  }>(`query($id: ID!) { functionHistory(id: $id, first: 50) { edges { node { ${ACTIVATION_FIELDS} } } } }`, { id });
  return functionHistory.edges.map((e) => e.node);
}

describe("functions", () => {
  it("are created, listed, called, updated and deleted; bad code is refused with its line", async () => {
    const bad = await createFunction(owner, { name: "broken", code: "function main(params) {\n  return (;\n}" });
    expect(bad.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(bad.errors?.[0].extensions)).toContain("/code");
    const noMain = await createFunction(owner, { name: "no main", code: "const x = 1;" });
    expect(noMain.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");

    const created = await createFunction(owner, { name: "double", code: "function main(p) { return p.data * 2; }" });
    expect(created.errors).toBeUndefined();
    const fn = created.data?.createFunction as { id: string; limits: { timeout: number } };
    expect(fn.limits.timeout).toBe(10);
    const { functions } = await owner.client.gqlOk<{ functions: { id: string }[] }>("{ functions { id name } }");
    expect(functions.map((f) => f.id)).toContain(fn.id);

    const { callFunction } = await owner.client.gqlOk<{ callFunction: { success: boolean; result: string } }>(
      `mutation($input: CallFunctionInput!) { callFunction(input: $input) { ${ACTIVATION_FIELDS} } }`,
      { input: { id: fn.id, params: 21 } },
    );
    expect(callFunction).toMatchObject({ success: true, result: "42", activationSource: "CALL" });

    await owner.client.gqlOk(`mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { id } }`, {
      input: { id: fn.id, code: "function main(p) { return p.data * 3; }", timeoutSec: 2 },
    });
    const again = await owner.client.gqlOk<{ callFunction: { result: string } }>(
      `mutation($input: CallFunctionInput!) { callFunction(input: $input) { result } }`,
      { input: { id: fn.id, params: { data: 5 } } },
    );
    expect(again.callFunction.result).toBe("15");
    expect((await history(owner, fn.id)).map((h) => h.result)).toEqual(["15", "42"]);

    // Params as JSON text, as the console's Run tab sends them; text that is not JSON is refused on its field.
    const call = (input: Record<string, unknown>) =>
      owner.client.gql<{ callFunction: { result: string } }>(
        `mutation($input: CallFunctionInput!) { callFunction(input: $input) { result } }`,
        { input: { id: fn.id, ...input } },
      );
    expect((await call({ paramsJson: '{ "data": 7 }' })).data?.callFunction.result).toBe("21");
    expect((await call({ paramsJson: "4" })).data?.callFunction.result).toBe("12");
    for (const input of [{ paramsJson: "{ data: 7" }, { params: 1, paramsJson: "1" }]) {
      const refused = await call(input);
      expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
      expect(JSON.stringify(refused.errors?.[0].extensions)).toContain("/paramsJson");
    }
    expect(await history(owner, fn.id)).toHaveLength(4);

    const deleted = await owner.client.gqlOk<{ deleteFunction: { success: boolean } }>(
      "mutation($id: ID!) { deleteFunction(id: $id) { success } }",
      { id: fn.id },
    );
    expect(deleted.deleteFunction.success).toBe(true);
    const gone = await owner.client.gql("query($id: ID!) { function(id: $id) { id } }", { id: fn.id });
    expect(gone.errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });

  it("testFunction runs code without saving it: results, logs, thrown errors and timeouts", async () => {
    const run = (code: string, params?: unknown, timeoutSec?: number) =>
      owner.client.gqlOk<{
        testFunction: {
          success: boolean;
          result: unknown;
          logs: { message: string }[];
          error: string | null;
          errorKind: string | null;
        };
      }>(
        "mutation($input: TestFunctionInput!) { testFunction(input: $input) { success result size duration error errorKind logs { level message } } }",
        { input: { code, params, timeoutSec } },
      );
    const ok = await run('async function main(p) { console.log("hi", p.data.n); return { n: p.data.n + 1 }; }', {
      n: 1,
    });
    expect(ok.testFunction).toMatchObject({ success: true, result: { n: 2 }, error: null });
    expect(ok.testFunction.logs.map((l) => l.message)).toEqual(["hi 1"]);
    const nothing = await run("function main() {}");
    expect(nothing.testFunction).toMatchObject({ success: true, result: null });
    const thrown = await run('function main() { throw new Error("nope"); }');
    expect(thrown.testFunction.success).toBe(false);
    expect(thrown.testFunction.error).toContain("nope");
    // The place of an error is in the user's code, not the wrapper that builds params around it.
    const place = (await run("function main() { return null.x; }")).testFunction.error ?? "";
    const [, line, column] = place.match(/line (\d+), column (\d+)/) ?? [];
    expect(Number(line), place).toBe(1);
    expect(Number(column), place).toBeGreaterThan(18);
    expect(Number(column), place).toBeLessThan(36);
    const loop = await run("function main() { for (;;) {} }", null, 1);
    expect(loop.testFunction.success).toBe(false);
    expect(loop.testFunction.errorKind).toBe("TIMEOUT");
  });

  it("a call that times out keeps in its history what it logged before, then why it stopped", async () => {
    const { createFunction: fn } = (
      await createFunction(owner, {
        name: "logs then loops",
        code: 'function main() { console.log("started"); console.error("about to loop"); for (;;) {} }',
        timeoutSec: 1,
      })
    ).data as { createFunction: { id: string } };
    const { callFunction } = await owner.client.gqlOk<{ callFunction: Activation }>(
      `mutation($input: CallFunctionInput!) { callFunction(input: $input) { ${ACTIVATION_FIELDS} } }`,
      { input: { id: fn.id, params: {} } },
    );
    expect(callFunction.success).toBe(false);
    expect(callFunction.errorKind).toBe("TIMEOUT");
    const [recorded] = await history(owner, fn.id);
    expect(recorded.id).toBe(callFunction.id);
    expect(recorded.logs).toEqual([
      { level: "INFO", message: "started" },
      { level: "ERROR", message: "about to loop" },
      { level: "ERROR", message: `Timed out: ${callFunction.error}` },
    ]);
  });

  it("another account can neither see, call, change nor deliver to a function", async () => {
    const { createFunction: fn } = (await createFunction(owner, { name: "mine", code: counter })).data as {
      createFunction: { id: string };
    };
    const { callFunction: run } = await owner.client.gqlOk<{ callFunction: { id: string } }>(
      "mutation($input: CallFunctionInput!) { callFunction(input: $input) { id } }",
      { input: { id: fn.id, params: { data: [], metadata: {} } } },
    );
    const stranger = await signUp(t.asTestApp);
    const { functions } = await stranger.client.gqlOk<{ functions: { id: string }[] }>("{ functions { id } }");
    expect(functions).toEqual([]);
    const { functionsOverview } = await stranger.client.gqlOk<{ functionsOverview: { totalCount: number } }>(
      "{ functionsOverview { totalCount } }",
    );
    expect(functionsOverview.totalCount).toBe(0);
    const usage = await stranger.client.gqlOk<{ functionsBillingUsage: { executions: number } }>(
      'query { functionsBillingUsage(start: "2000-01-01T00:00:00Z", end: "2100-01-01T00:00:00Z") { executions } }',
    );
    expect(usage.functionsBillingUsage.executions).toBe(0);
    for (const [query, variables] of [
      ["query($id: ID!) { function(id: $id) { id } }", { id: fn.id }],
      ["query($id: ID!) { functionHistory(id: $id) { edges { node { id } } } }", { id: fn.id }],
      ["query($id: ID!) { functionSettings(id: $id) { id } }", { id: fn.id }],
      ["query($id: ID!) { functionVersions(id: $id) { id } }", { id: fn.id }],
      ["query($id: ID!) { functionLogs(id: $id) { edges { node { id } } } }", { id: fn.id }],
      [
        'query($id: ID!) { functionMetrics(id: $id, startDate: "2000-01-01T00:00:00Z") { execution { total } } }',
        { id: fn.id },
      ],
      ["query($id: ID!) { functionActivation(id: $id) { id } }", { id: run.id }],
      ["query($id: ID!) { functionActivationResult(id: $id) { id } }", { id: run.id }],
      ["mutation($input: CallFunctionInput!) { callFunction(input: $input) { id } }", { input: { id: fn.id } }],
      [
        "mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { id } }",
        { input: { id: fn.id, code: "function main() { return 1; }" } },
      ],
      ["mutation($id: ID!) { deleteFunction(id: $id) { success } }", { id: fn.id }],
    ] as const) {
      const r = await stranger.client.gql(query, variables);
      expect(r.errors?.[0].extensions?.code, query).toBe("NOT_FOUND");
    }
    const stream = await stranger.client.gql(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "theirs",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "FUNCTION",
          destinationAttributes: { functionID: fn.id },
          startRange: 1,
        },
      },
    );
    expect(stream.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(stream.errors?.[0].extensions)).toContain("/destinationAttributes/functionID");
    const probe = await stranger.client.gqlOk<{ testFunctionDestination: { success: boolean; message: string } }>(
      "mutation($input: JSON!) { testFunctionDestination(input: $input) { success message } }",
      { input: { functionID: fn.id } },
    );
    expect(probe.testFunctionDestination).toMatchObject({ success: false });
    expect(probe.testFunctionDestination.message).toContain("does not exist");
    // The owner's own test does run it.
    const own = await owner.client.gqlOk<{ testFunctionDestination: { success: boolean } }>(
      "mutation($input: JSON!) { testFunctionDestination(input: $input) { success message } }",
      { input: { functionID: fn.id } },
    );
    expect(own.testFunctionDestination.success).toBe(true);
  });
});

const call = (user: TestUser, input: Record<string, unknown>) =>
  user.client.gql<{ callFunction: Activation }>(
    `mutation($input: CallFunctionInput!) { callFunction(input: $input) { ${ACTIVATION_FIELDS} } }`,
    { input },
  );

async function newFunction(user: TestUser, input: Record<string, unknown>): Promise<string> {
  const created = await createFunction(user, input);
  expect(created.errors).toBeUndefined();
  return (created.data as { createFunction: { id: string } }).createFunction.id;
}

/** GB-seconds of one run: its memory for its duration rounded up to the millisecond (at least 1 ms). */
const gbSeconds = (memoryMb: number, durationMs: number) =>
  (memoryMb * Math.max(1, Math.ceil(durationMs))) / 1024 / 1000;

describe("functions: versions, user data, history, logs, metrics and usage", () => {
  it("an update of code or limits is a new version; runs name the version they ran; versions keep the code", async () => {
    const id = await newFunction(owner, { name: "versioned", code: "function main() { return 1; }" });
    expect((await call(owner, { id })).data?.callFunction).toMatchObject({ result: "1", version: 1 });
    const update = (input: Record<string, unknown>) =>
      owner.client.gqlOk<{ updateFunction: { version: number } }>(
        "mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { version } }",
        { input: { id, ...input } },
      );
    expect((await update({ code: "function main() { return 2; }" })).updateFunction.version).toBe(2);
    expect((await update({ name: "renamed", description: "same code" })).updateFunction.version).toBe(2);
    expect((await update({ code: "function main() { return 2; }" })).updateFunction.version).toBe(2);
    expect((await update({ memoryMb: 256 })).updateFunction.version).toBe(3);
    expect((await call(owner, { id })).data?.callFunction).toMatchObject({ result: "2", version: 3, memoryLimit: 256 });
    expect((await history(owner, id)).map((h) => [h.version, h.result])).toEqual([
      [3, "2"],
      [1, "1"],
    ]);
    const { functionVersions } = await owner.client.gqlOk<{
      functionVersions: { version: number; code: string; memoryMb: number }[];
    }>("query($id: ID!) { functionVersions(id: $id) { version code memoryMb timeoutSec createdAt } }", { id });
    expect(functionVersions.map((v) => [v.version, v.code, v.memoryMb])).toEqual([
      [3, "function main() { return 2; }", 256],
      [2, "function main() { return 2; }", 128],
      [1, "function main() { return 1; }", 128],
    ]);
    // A refused update (bad code) changes nothing and makes no version.
    const refused = await owner.client.gql(
      "mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { version } }",
      { input: { id, code: "function main( {" } },
    );
    expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const { functionSettings } = await owner.client.gqlOk<{ functionSettings: { version: number; code: string } }>(
      "query($id: ID!) { functionSettings(id: $id) { version code } }",
      { id },
    );
    expect(functionSettings).toEqual({ version: 3, code: "function main() { return 2; }" });
  });

  it("keeps a function's newest 100 versions; its runs still name theirs", async () => {
    // Every version was kept: updates of 100 KB of code kept 4.6 MB a second, all answered by functionVersions.
    const id = await newFunction(owner, { name: "versions kept", code: "function main() { return 0; }" });
    for (let i = 1; i <= 104; i += 8)
      await Promise.all(
        Array.from({ length: 8 }, (_, j) =>
          owner.client.gqlOk("mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { version } }", {
            input: { id, code: `function main() { return ${i + j}; }` },
          }),
        ),
      );
    await owner.client.gqlOk("mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { version } }", {
      input: { id, code: 'function main() { return "last"; }' },
    });
    const { functionVersions } = await owner.client.gqlOk<{ functionVersions: { version: number }[] }>(
      "query($id: ID!) { functionVersions(id: $id) { version } }",
      { id },
    );
    expect(functionVersions.map((v) => v.version)).toEqual(Array.from({ length: 100 }, (_, i) => 106 - i));
    const run = (await call(owner, { id })).data?.callFunction as Activation;
    expect(run).toMatchObject({ version: 106, result: '"last"' });
  });

  it("main gets params.user_data beside data and metadata; the run keeps it", async () => {
    const id = await newFunction(owner, {
      name: "user data",
      code: "async function main(params) { return { user: params.user_data, data: params.data, keys: Object.keys(params.metadata) }; }",
    });
    const run = (await call(owner, { id, userData: { who: "ada" }, params: { data: [1], metadata: { a: 1 } } })).data
      ?.callFunction as Activation;
    expect(JSON.parse(run.result as string)).toEqual({ user: { who: "ada" }, data: [1], keys: ["a"] });
    expect(run.userData).toEqual({ who: "ada" });
    const asText = (await call(owner, { id, userDataJson: '{"n": 2}' })).data?.callFunction as Activation;
    expect(JSON.parse(asText.result as string)).toEqual({ user: { n: 2 }, data: null, keys: [] });
    const bad = await call(owner, { id, userDataJson: "{ n: 2" });
    expect(JSON.stringify(bad.errors?.[0].extensions)).toContain("/userDataJson");
    // The same in a test run of unsaved code, which is not recorded.
    const before = (await history(owner, id)).length;
    const { testFunction } = await owner.client.gqlOk<{ testFunction: { result: unknown } }>(
      "mutation($input: TestFunctionInput!) { testFunction(input: $input) { result } }",
      { input: { code: "function main(p) { return p.user_data.x * 2; }", userData: { x: 4 } } },
    );
    expect(testFunction.result).toBe(8);
    expect(await history(owner, id)).toHaveLength(before);
  });

  it("a call may name a block: params.data and params.metadata are that block's, as a stream delivers it", async () => {
    const id = await newFunction(owner, { name: "block call", code: counter });
    const run = (await call(owner, { id, network: NETWORK, dataset: "BLOCK", blockNumber: 3 })).data
      ?.callFunction as Activation;
    expect(JSON.parse(run.result as string)).toEqual({ blocks: [3] });
    expect(run).toMatchObject({ activationSource: "CALL", blockNumber: 3 });
    const both = await call(owner, { id, network: NETWORK, dataset: "BLOCK", blockNumber: 3, params: { data: 1 } });
    expect(both.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const half = await call(owner, { id, network: NETWORK });
    expect(half.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
  });

  it("history pages with first and after; an activation and its whole result are read by id", async () => {
    const id = await newFunction(owner, {
      name: "pages",
      code: 'function main(p) { return { n: p.data, pad: "x".repeat(p.data === 3 ? 3000 : 1) }; }',
    });
    for (const n of [1, 2, 3]) await call(owner, { id, params: n });
    const page = (after?: string) =>
      owner.client.gqlOk<{
        functionHistory: {
          edges: { node: { id: string; result: string } }[];
          pageInfo: { endCursor: string; hasNextPage: boolean };
        };
      }>(
        "query($id: ID!, $after: String) { functionHistory(id: $id, first: 2, after: $after) { edges { node { id result } } pageInfo { endCursor hasNextPage } } }",
        { id, after },
      );
    const first = (await page()).functionHistory;
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await page(first.pageInfo.endCursor)).functionHistory;
    expect(second.pageInfo.hasNextPage).toBe(false);
    const ids = [...first.edges, ...second.edges].map((e) => e.node.id);
    expect(new Set(ids).size).toBe(3);
    // The history keeps the start of a result; the activation result has all of it.
    const newest = first.edges[0].node;
    expect(newest.result.length).toBe(2000);
    const { functionActivationResult: whole } = await owner.client.gqlOk<{
      functionActivationResult: { kept: boolean; result: { n: number; pad: string } };
    }>("query($id: ID!) { functionActivationResult(id: $id) { id success size kept result error } }", {
      id: newest.id,
    });
    expect(whole.kept).toBe(true);
    expect(whole.result).toMatchObject({ n: 3 });
    expect(whole.result.pad).toHaveLength(3000);
    const { functionActivation } = await owner.client.gqlOk<{ functionActivation: { id: string; size: number } }>(
      "query($id: ID!) { functionActivation(id: $id) { id size logs { level message } } }",
      { id: newest.id },
    );
    expect(functionActivation.id).toBe(newest.id);
    const badCursor = await owner.client.gql(
      'query($id: ID!) { functionHistory(id: $id, after: "nope") { edges { cursor } } }',
      { id },
    );
    expect(badCursor.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
  });

  it("logs: every console line of every run, by level and text, paged newest first", async () => {
    const id = await newFunction(owner, {
      name: "chatty",
      code: 'function main(p) { console.log("start " + p.data); console.warn("careful " + p.data); console.error("bad " + p.data); return null; }',
    });
    await call(owner, { id, params: 1 });
    await call(owner, { id, params: 2 });
    const logs = (args: Omit<VariablesOf<"FunctionLogs">, "id">) => owner.client.opOk("FunctionLogs", { id, ...args });
    const all = (await logs({})).functionLogs.edges.map((e) => e.node.message);
    expect(all).toEqual(["bad 2", "careful 2", "start 2", "bad 1", "careful 1", "start 1"]);
    const warnings = (await logs({ levels: ["WARNING", "ERROR"] })).functionLogs.edges.map((e) => e.node.level);
    expect(warnings).toEqual(["ERROR", "WARNING", "ERROR", "WARNING"]);
    expect((await logs({ searchText: "start" })).functionLogs.edges.map((e) => e.node.message)).toEqual([
      "start 2",
      "start 1",
    ]);
    expect((await logs({ searchText: "%" })).functionLogs.edges).toEqual([]);
    const first = (await logs({ first: 4 })).functionLogs;
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await logs({ first: 4, after: first.pageInfo.endCursor })).functionLogs;
    expect([...first.edges, ...rest.edges].map((e) => e.node.message)).toEqual(all);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });

  it("a failed run's error is its last line in the logs, at level ERROR", async () => {
    const id = await newFunction(owner, {
      name: "throws",
      code: 'function main(p) { console.log("before " + p.data); if (p.data === 2) throw new Error("no two"); return 1; }',
    });
    const failed = (await call(owner, { id, params: 2 })).data?.callFunction as Activation;
    await call(owner, { id, params: 1 });
    expect(failed.success).toBe(false);
    const logs = await owner.client.gqlOk<{ functionLogs: { edges: { node: { level: string; message: string } }[] } }>(
      "query($id: ID!) { functionLogs(id: $id) { edges { node { level message } } } }",
      { id },
    );
    expect(logs.functionLogs.edges.map((e) => `${e.node.level} ${e.node.message}`)).toEqual([
      "INFO before 1",
      `ERROR Runtime error: ${failed.error}`,
      "INFO before 2",
    ]);
    expect(failed.error).toContain("no two");
  });

  it("runs bill GB-seconds (memory × duration rounded up to the millisecond) into the usage rows, metrics and billing usage", async () => {
    const id = await newFunction(owner, {
      name: "billed",
      memoryMb: 512,
      code: 'function main(p) { if (p.data === "fail") throw new Error("no"); let x = 0; for (let i = 0; i < 20000; i++) x += i; return x; }',
    });
    const start = new Date(Date.now() - 60_000).toISOString();
    const runs = [
      (await call(owner, { id, params: 1 })).data?.callFunction as Activation,
      (await call(owner, { id, params: 2 })).data?.callFunction as Activation,
      (await call(owner, { id, params: "fail" })).data?.callFunction as Activation,
    ];
    for (const r of runs) {
      expect(r.memoryLimit).toBe(512);
      expect(r.memory).toBeGreaterThan(0);
      expect(r.memory).toBeLessThanOrEqual(512);
      expect(r.billable).toBeCloseTo(gbSeconds(512, r.duration), 12);
      expect(r.billable).toBeGreaterThan(0);
    }
    const billed = runs.reduce((a, r) => a + r.billable, 0);
    const rows = await t.db.execute<{ executions: string; errors: string; mb_ms: string; response_bytes: string }>(
      sql`select sum(executions) as executions, sum(errors) as errors, sum(mb_ms) as mb_ms, sum(response_bytes) as response_bytes from function_usage_minutes where function_id = ${id}`,
    );
    expect(Number(rows.rows[0].executions)).toBe(3);
    expect(Number(rows.rows[0].errors)).toBe(1);
    expect(Number(rows.rows[0].mb_ms) / 1024 / 1000).toBeCloseTo(billed, 12);
    expect(Number(rows.rows[0].response_bytes)).toBe(runs[0].size + runs[1].size);

    const { functionMetrics: m } = await owner.client.opOk("FunctionMetrics", { id, startDate: start });
    expect(m.execution.total).toBe(3);
    expect(m.execution.cumulative.at(-1)?.value).toBe(3);
    expect(m.error.total).toBe(1);
    expect(m.usage.total).toBeCloseTo(billed, 12);
    expect(m.usage.cumulative.at(-1)?.value).toBeCloseTo(billed, 12);
    expect(m.size.total).toBe(runs[0].size + runs[1].size);
    expect(m.duration.average).toBeCloseTo(m.duration.total / 3, 9);
    // The metrics screen's document gives startDate a default: it arrives as text and is read the same.
    const { functionMetrics: all } = await owner.client.opOk("FunctionMetrics", { id });
    expect(all.execution.total).toBe(3);
    // A window ending before it starts is refused, and the message says why (a metrics screen shows it).
    const backwards = await owner.client.gql(
      "query($id: ID!, $start: DateTime!, $end: DateTime) { functionMetrics(id: $id, startDate: $start, endDate: $end) { from } }",
      { id, start: "2026-11-02T00:00:00Z", end: "2026-11-01T00:00:00Z" },
    );
    expect(backwards.errors?.[0]).toMatchObject({
      message: "The end of the window must be after its start.",
      extensions: { code: "BAD_USER_INPUT", fields: [{ pointer: "/endDate" }] },
    });

    const { functionsBillingUsage: u } = await owner.client.opOk("FunctionsBillingUsage", {
      start,
      end: new Date(Date.now() + 60_000).toISOString(),
      tick: "HOUR",
    });
    expect(u.gbSeconds).toBeGreaterThanOrEqual(billed);
    expect(u.ticks.reduce((a, x) => a + x.gbSeconds, 0)).toBeCloseTo(u.gbSeconds, 9);
    // Usage outlives the function: it is billing history.
    await owner.client.opOk("DeleteFunction", { id });
    const after = await t.db.execute<{ n: string }>(
      sql`select sum(executions) as n from function_usage_minutes where function_id = ${id}`,
    );
    expect(Number(after.rows[0].n)).toBe(3);
  });

  it("the functions overview pages with limit and after, with its total", async () => {
    const stranger = await signUp(t.asTestApp);
    for (const n of [1, 2, 3]) await newFunction(stranger, { name: `f${n}`, code: "function main() {}" });
    type Page = {
      functionsOverview: {
        edges: { node: { name: string } }[];
        pageInfo: { endCursor: string; hasNextPage: boolean };
        totalCount: number;
      };
    };
    const page = (after?: string) =>
      stranger.client.gqlOk<Page>(
        "query($after: String) { functionsOverview(limit: 2, after: $after) { edges { node { name } } pageInfo { endCursor hasNextPage } totalCount } }",
        { after },
      );
    const first = (await page()).functionsOverview;
    expect(first.totalCount).toBe(3);
    expect(first.edges.map((e) => e.node.name)).toEqual(["f3", "f2"]);
    const second = (await page(first.pageInfo.endCursor)).functionsOverview;
    expect(second.edges.map((e) => e.node.name)).toEqual(["f1"]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it("permissions list Node.js and the spec's other languages as coming soon", async () => {
    const { functionPermissions: p } = await owner.client.gqlOk<{
      functionPermissions: {
        languages: { value: string; disabled: boolean; comingSoon: boolean }[];
        memorySizes: number[];
        chainConfigs: { networks: { value: string }[] }[];
      };
    }>(
      "{ functionPermissions { languages { value label disabled comingSoon } memorySizes maxTimeoutSec chainConfigs { chain networks { value datasets { value } } } } }",
    );
    expect(p.languages.find((l) => l.value === "NODEJS")).toMatchObject({ disabled: false, comingSoon: false });
    const others = p.languages.filter((l) => l.value !== "NODEJS");
    expect(others.map((l) => l.value).sort()).toEqual(["DOTNET", "GO", "JAVA", "PHP", "PYTHON", "RUBY", "SWIFT"]);
    expect(others.every((l) => l.disabled && l.comingSoon)).toBe(true);
    expect(p.memorySizes).toContain(128);
    expect(p.chainConfigs.flatMap((c) => c.networks.map((n) => n.value))).toContain(NETWORK);
  });

  it("quick functions: a template becomes a deployed function in one step, behind the quickfunctions flag", async () => {
    const user = await signUp(t.asTestApp);
    const { functionTemplates } = await user.client.gqlOk<{
      functionTemplates: { id: string; exampleParams: string }[];
    }>("{ functionTemplates { id title description code exampleParams } }");
    expect(functionTemplates.length).toBeGreaterThan(1);
    for (const template of functionTemplates) {
      const { createQuickFunction: fn } = await user.client.gqlOk<{
        createQuickFunction: { id: string; name: string };
      }>("mutation($input: CreateQuickFunctionInput!) { createQuickFunction(input: $input) { id name } }", {
        input: { templateId: template.id },
      });
      // Every template runs as it is on its example params.
      const run = (await call(user, { id: fn.id, paramsJson: template.exampleParams })).data?.callFunction;
      expect(run?.error, template.id).toBeNull();
      expect(run?.success, template.id).toBe(true);
    }
    const named = await user.client.gqlOk<{ createQuickFunction: { name: string } }>(
      'mutation { createQuickFunction(input: { templateId: "block-summary", name: "mine" }) { name } }',
    );
    expect(named.createQuickFunction.name).toBe("mine");
    const unknown = await user.client.gql('mutation { createQuickFunction(input: { templateId: "nope" }) { id } }');
    expect(JSON.stringify(unknown.errors?.[0].extensions)).toContain("/templateId");
    await t.db.execute(
      sql`update accounts set feature_flags = '{"quickfunctions": false}' where id = ${user.viewer.id}`,
    );
    for (const query of [
      "{ functionTemplates { id } }",
      'mutation { createQuickFunction(input: { templateId: "block-summary" }) { id } }',
    ]) {
      const refused = await user.client.gql(query);
      expect(refused.errors?.[0].extensions?.code, query).toBe("FORBIDDEN");
    }
  });
});

describe("the HTTP address POST /functions/<id>/call", () => {
  const post = (user: TestUser | null, id: string, body: unknown, contentType = "application/json") =>
    (user?.client ?? t.asTestApp.client()).request(`/functions/${id}/call`, {
      method: "POST",
      headers: { "content-type": contentType },
      body: JSON.stringify(body),
    });

  it("runs the function with the signed-in session: JSON in and out, recorded as RPC and billed", async () => {
    const id = await newFunction(owner, {
      name: "over http",
      code: 'function main(p) { console.log("hi"); if (p.user_data && p.user_data.fail) throw new Error("asked to fail"); return { echo: p.user_data }; }',
    });
    const { function: fn } = await owner.client.gqlOk<{ function: { callUrl: string } }>(
      "query($id: ID!) { function(id: $id) { callUrl } }",
      { id },
    );
    expect(fn.callUrl).toBe(`${t.url}/functions/${id}/call`);
    const ok = await post(owner, id, { user_data: { a: 1 } });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { result: unknown; success: boolean; activationId: string; billable: number };
    expect(body).toMatchObject({ success: true, result: { echo: { a: 1 } }, version: 1 });
    expect(body.billable).toBeGreaterThan(0);
    const [latest] = await history(owner, id);
    expect(latest).toMatchObject({ id: body.activationId, activationSource: "RPC", userData: { a: 1 } });

    const failed = await post(owner, id, { user_data: { fail: true } });
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ success: false, error: expect.stringContaining("asked to fail") });

    const latestBlock = await post(owner, id, { network: NETWORK, dataset: "BLOCK", block: "latest" });
    expect(latestBlock.status).toBe(200);
    expect((await history(owner, id))[0]).toMatchObject({ activationSource: "RPC", dataset: "BLOCK" });
  });

  it("refuses without a session, with a viewer's, another account's, a bad body or a form post", async () => {
    const id = await newFunction(owner, { name: "guarded", code: "function main() { return 1; }" });
    const runsBefore = (await history(owner, id)).length;
    expect((await post(null, id, {})).status).toBe(401);
    const viewer = await signIn(t.asTestApp, "viewer@nodeplane.local", DEMO_PASSWORD);
    expect((await post(viewer, id, {})).status).toBe(403);
    const stranger = await signUp(t.asTestApp);
    const notTheirs = await post(stranger, id, {});
    expect(notTheirs.status).toBe(404);
    expect(await notTheirs.json()).toMatchObject({ code: "NOT_FOUND" });
    expect((await post(owner, "not-a-uuid", {})).status).toBe(404);
    const bad = await post(owner, id, { block: 1 });
    expect(bad.status).toBe(400);
    expect((await post(owner, id, { unknown: 1 })).status).toBe(400);
    // A block the chain does not have yet is named by the body's own field.
    const future = await post(owner, id, { network: NETWORK, dataset: "BLOCK", block: 1e12 });
    expect(future.status).toBe(400);
    expect(await future.json()).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/block" }] });
    // A cross-site form may post text/plain with the cookie; only JSON is taken.
    expect((await post(owner, id, {}, "text/plain")).status).toBe(400);
    expect(await history(owner, id)).toHaveLength(runsBefore);
  });
});

describe("streams with a FUNCTION destination", () => {
  it("the permissions offer FUNCTION now that the functions runtime is connected", async () => {
    const { streamPermissions } = await owner.client.gqlOk<{
      streamPermissions: { destinations: { value: string; disabled: boolean }[] };
    }>("{ streamPermissions { destinations { value disabled } } }");
    expect(streamPermissions.destinations.find((d) => d.value === "FUNCTION")).toMatchObject({ disabled: false });
  });

  it("testNewFunctionForStream runs new code on a real block after the stream's filter", async () => {
    const { testNewFunctionForStream: r } = await owner.client.gqlOk<{
      testNewFunctionForStream: { success: boolean; result: { blocks: number[] }; logs: { message: string }[] };
    }>(
      "mutation($input: TestNewFunctionForStreamInput!) { testNewFunctionForStream(input: $input) { success result size duration error logs { level message } } }",
      {
        input: {
          network: NETWORK,
          dataset: "BLOCK",
          blockNumber: 4,
          batchSize: 2,
          filterFunction: 'function main(stream) { console.log("filtered"); return stream.data; }',
          code: counter,
        },
      },
    );
    expect(r.success).toBe(true);
    expect(r.result.blocks).toEqual([4, 5]);
    expect(r.logs.map((l) => l.message)).toEqual(["filtered", "batch 4-5"]);
  });

  it("createStreamWithFunction creates both at once; the stream runs the function on every block, in order", async () => {
    const refused = await owner.client.gql(
      "mutation($input: CreateStreamWithFunctionInput!) { createStreamWithFunction(input: $input) { id } }",
      {
        input: {
          name: "half",
          network: NETWORK,
          dataset: "BLOCK",
          startRange: 1,
          function: { name: "broken", code: "function main( {" },
        },
      },
    );
    expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const before = await owner.client.gqlOk<{ functions: { name: string }[] }>("{ functions { name } }");
    expect(before.functions.map((f) => f.name)).not.toContain("broken");

    const { createStreamWithFunction: stream } = await owner.client.gqlOk<{
      createStreamWithFunction: {
        id: string;
        status: string;
        destination: string;
        destinationAttributes: { functionID: string };
        destinationFunctionName: string | null;
      };
    }>(
      "mutation($input: CreateStreamWithFunctionInput!) { createStreamWithFunction(input: $input) { id status destination destinationAttributes destinationFunctionName } }",
      {
        input: {
          name: "blocks to a function",
          network: NETWORK,
          dataset: "BLOCK",
          startRange: 1,
          endRange: 9,
          datasetBatchSize: 3,
          includeStreamMetadata: "BODY",
          destinationAttributes: { maxRetry: 0, retryIntervalSec: 0 },
          function: { name: "counter", code: counter },
          status: "ACTIVE",
        },
      },
    );
    expect(stream).toMatchObject({ status: "ACTIVE", destination: "FUNCTION", destinationFunctionName: "counter" });
    const functionId = stream.destinationAttributes.functionID;

    const runs = await waitFor("three runs of the function", async () => {
      const h = await history(owner, functionId);
      return h.length >= 3 ? h : null;
    });
    const ordered = [...runs].reverse();
    expect(ordered.every((r) => r.success && r.activationSource === "STREAM" && r.streamId === stream.id)).toBe(true);
    expect(ordered.every((r) => r.version === 1 && r.memoryLimit === 128 && r.billable > 0)).toBe(true);
    expect(ordered.flatMap((r) => (JSON.parse(r.result as string) as { blocks: number[] }).blocks)).toEqual(
      blockNumbers(Array.from({ length: 9 }, (_, i) => ({ number: `0x${(i + 1).toString(16)}` }))),
    );
    expect(ordered.map((r) => r.blockNumber)).toEqual([1, 4, 7]);
    expect(ordered[0].logs.map((l) => l.message)).toEqual(["batch 1-3"]);
    await waitFor("the stream to complete", async () => {
      const { stream: s } = await owner.client.gqlOk<{ stream: { status: string } }>(
        "query($id: ID!) { stream(id: $id) { status } }",
        { id: stream.id },
      );
      return s.status === "COMPLETED";
    });

    // A function a stream delivers to cannot be deleted out from under it.
    const refusedDelete = await owner.client.gql("mutation($id: ID!) { deleteFunction(id: $id) { success } }", {
      id: functionId,
    });
    expect(refusedDelete.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(refusedDelete.errors?.[0].extensions)).toContain("blocks to a function");
  });

  it("a function that throws fails the delivery, and the stream pauses after its retries", async () => {
    const { createFunction: fn } = (
      await createFunction(owner, { name: "thrower", code: 'function main() { throw new Error("refused"); }' })
    ).data as { createFunction: { id: string } };
    const { createStream: s } = await owner.client.gqlOk<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "to a thrower",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "FUNCTION",
          destinationAttributes: { functionID: fn.id, maxRetry: 1, retryIntervalSec: 0 },
          startRange: 1,
          endRange: 2,
          status: "ACTIVE",
        },
      },
    );
    const paused = await waitFor("the stream to pause", async () => {
      const { stream } = await owner.client.gqlOk<{ stream: { status: string; statusReason: string } }>(
        "query($id: ID!) { stream(id: $id) { status statusReason } }",
        { id: s.id },
      );
      return stream.status === "PAUSED" ? stream : null;
    });
    expect(paused.statusReason).toContain("refused");
    const runs = await history(owner, fn.id);
    expect(runs).toHaveLength(2);
    expect(runs.every((r) => !r.success && r.error?.includes("refused"))).toBe(true);
  });
});
