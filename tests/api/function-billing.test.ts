import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sandboxProcess } from "../../server/dataplane/sandbox/process.ts";
import { functionUsageMinutes } from "../../server/domains/functions/tables.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { putOnPlan } from "../support/plans.ts";

// Functions bill in GB-seconds (configured memory × billed duration), with GB-seconds included per plan
// and a price past them (schemas/catalogue/function-limits.json), shown on the usage screen; a plan that
// sells none refuses runs once its included GB-seconds are used.

const ctx = useTestApp();
const db = () => openDatabase(ctx.app.database.url, 2);

const USAGE =
  "gbSeconds executions errors points { x gbSeconds executions } periodStart periodEnd periodGbSeconds includedGbSeconds overageGbSeconds pricePerMillion overageCost";

interface GbSecondUsage {
  gbSeconds: number;
  executions: number;
  errors: number;
  points: { x: string; gbSeconds: number; executions: number }[];
  periodGbSeconds: number;
  includedGbSeconds: number;
  overageGbSeconds: number;
  pricePerMillion: number | null;
  overageCost: number;
}

async function usageOf(client: GqlClient, args = "") {
  const data = await client.gqlOk<{ usage: { functionGbSeconds: GbSecondUsage } }>(
    `{ usage${args} { functionGbSeconds { ${USAGE} } } }`,
  );
  return data.usage.functionGbSeconds;
}

/** A minute's usage row, as a run would have metered it: `gbSeconds` of runs. */
async function meter(database: ReturnType<typeof db>, accountId: string, gbSeconds: number, executions = 1) {
  await database.insert(functionUsageMinutes).values({
    accountId,
    functionId: randomUUID(),
    minute: new Date(Math.floor(Date.now() / 60_000) * 60_000),
    executions,
    errors: 0,
    durationMs: 100,
    responseBytes: 0,
    mbMs: gbSeconds * 1024 * 1000,
  });
}

async function createAndCall(client: GqlClient) {
  const created = await client.gqlOk<{ createFunction: { id: string } }>(
    "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
    { input: { name: "double", code: "function main(p) { return p.data * 2; }" } },
  );
  return client.gql<{ callFunction: { success: boolean; result: string } }>(
    "mutation($input: CallFunctionInput!) { callFunction(input: $input) { success result } }",
    { input: { id: created.createFunction.id, params: 21 } },
  );
}

describe("function GB-seconds on the usage screen", () => {
  it("are the account's runs in the window and the period's bill, and not another account's", async () => {
    const owner = await signUp(ctx.app);
    const other = await signUp(ctx.app);
    const database = db();
    try {
      await meter(database, owner.viewer.id, 12.5, 3);
      const shown = await usageOf(owner.client);
      expect(shown).toMatchObject({ gbSeconds: 12.5, executions: 3, periodGbSeconds: 12.5, overageGbSeconds: 0 });
      expect(shown.points).toHaveLength(1);
      expect(shown.points[0]).toMatchObject({ gbSeconds: 12.5, executions: 3 });
      // A new account is on the Free plan: 100,000 GB-seconds included, none sold past them.
      expect(shown).toMatchObject({ includedGbSeconds: 100_000, pricePerMillion: null, overageCost: 0 });
      expect(await usageOf(owner.client, "(pastDay: true)")).toMatchObject({ gbSeconds: 12.5, executions: 3 });

      // A run is billed and shown: 128 MB for at least 1 ms.
      const run = await createAndCall(owner.client);
      expect(run.data?.callFunction).toMatchObject({ success: true, result: "42" });
      const afterRun = await usageOf(owner.client);
      expect(afterRun.executions).toBe(4);
      expect(afterRun.gbSeconds).toBeGreaterThanOrEqual(12.5 + 128 / 1024 / 1000);

      expect(await usageOf(other.client)).toMatchObject({
        gbSeconds: 0,
        executions: 0,
        periodGbSeconds: 0,
        points: [],
      });
    } finally {
      await database.$client.end();
    }
  });

  it("past the included GB-seconds cost the plan's price per million, or runs are refused on Free", async () => {
    const paying = await signUp(ctx.app);
    const free = await signUp(ctx.app);
    const database = db();
    try {
      await putOnPlan(database, paying.viewer.id, "b6_build");
      await meter(database, paying.viewer.id, 1_300_000);
      expect(await usageOf(paying.client)).toMatchObject({
        periodGbSeconds: 1_300_000,
        includedGbSeconds: 1_000_000,
        overageGbSeconds: 300_000,
        pricePerMillion: 16.67,
        overageCost: 5,
      });
      expect((await createAndCall(paying.client)).data?.callFunction.success).toBe(true);

      // A test of unsaved code is a run too: billed to the account, on no function's metrics.
      const tested = await paying.client.gqlOk<{ testFunction: { success: boolean } }>(
        "mutation($input: TestFunctionInput!) { testFunction(input: $input) { success } }",
        { input: { code: "function main(p) { return 1; }", memoryMb: 512 } },
      );
      expect(tested.testFunction.success).toBe(true);
      expect((await usageOf(paying.client)).executions).toBe(3);

      await meter(database, free.viewer.id, 100_000);
      const refusedTest = await free.client.gql(
        "mutation($input: TestFunctionInput!) { testFunction(input: $input) { success } }",
        { input: { code: "function main(p) { return 1; }" } },
      );
      expect(refusedTest.errors?.[0].extensions?.code).toBe("CONFLICT");
      const refused = await createAndCall(free.client);
      expect(refused.errors?.[0].extensions?.code).toBe("CONFLICT");
      expect(refused.errors?.[0].message).toContain("100,000 GB-seconds");
      // Refused runs are not billed.
      expect(await usageOf(free.client)).toMatchObject({ executions: 1, periodGbSeconds: 100_000, overageCost: 0 });
    } finally {
      await database.$client.end();
    }
  });

  it("a run that wrote, failed only because its sandbox process was lost, is recorded, but not billed", async () => {
    const owner = await signUp(ctx.app);
    // It writes before it spins: the sandbox does not run it again itself (it could write twice).
    const { createFunction } = await owner.client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      {
        input: {
          name: "slow",
          code: 'async function main(p) { await qnLib.qnAddSet("seen", "1"); const end = Date.now() + 3000; while (Date.now() < end); return 1; }',
          timeoutSec: 10,
        },
      },
    );
    const call = owner.client.gql<{ callFunction: { success: boolean; error: string | null } }>(
      "mutation($input: CallFunctionInput!) { callFunction(input: $input) { success error } }",
      { input: { id: createFunction.id } },
    );
    // Killed from outside while the run spins (as when another account's call crashed the process).
    const lane = sandboxProcess(10_000);
    const pid = await waitForValue(() => lane.pid);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    process.kill(pid, "SIGKILL");
    const answer = await call;
    expect(answer.data?.callFunction).toMatchObject({ success: false, error: expect.stringMatching(/retry it$/) });
    const { functionHistory } = await owner.client.gqlOk<{
      functionHistory: { edges: { node: { success: boolean; billable: number; duration: number } }[] };
    }>("query($id: ID!) { functionHistory(id: $id) { edges { node { success billable duration } } } }", {
      id: createFunction.id,
    });
    expect(functionHistory.edges.map((e) => e.node)).toEqual([
      { success: false, billable: 0, duration: expect.any(Number) },
    ]);
    expect(await usageOf(owner.client)).toMatchObject({ gbSeconds: 0, executions: 1, errors: 1 });
  }, 30_000);

  it("a run that wrote nothing, failed only because its sandbox process was lost, runs again: the caller sees it succeed", async () => {
    const owner = await signUp(ctx.app);
    const { createFunction } = await owner.client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      {
        input: {
          name: "slow",
          code: "function main(p) { const end = Date.now() + 2000; while (Date.now() < end); return 1; }",
          timeoutSec: 10,
        },
      },
    );
    const call = owner.client.gql<{ callFunction: { success: boolean; result: unknown } }>(
      "mutation($input: CallFunctionInput!) { callFunction(input: $input) { success result } }",
      { input: { id: createFunction.id } },
    );
    const lane = sandboxProcess(10_000);
    const pid = await waitForValue(() => lane.pid);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    process.kill(pid, "SIGKILL");
    expect((await call).data?.callFunction).toEqual({ success: true, result: "1" });
    expect(lane.pid).not.toBe(pid);
    // One run in its history and its usage: the one that ended, billed for its own duration.
    const { functionHistory } = await owner.client.gqlOk<{
      functionHistory: { edges: { node: { success: boolean; duration: number } }[] };
    }>("query($id: ID!) { functionHistory(id: $id) { edges { node { success duration } } } }", {
      id: createFunction.id,
    });
    expect(functionHistory.edges.map((e) => e.node)).toEqual([{ success: true, duration: expect.any(Number) }]);
    expect(functionHistory.edges[0].node.duration).toBeLessThan(3_000);
    expect(await usageOf(owner.client)).toMatchObject({ executions: 1, errors: 0 });
  }, 30_000);
});

async function waitForValue<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
