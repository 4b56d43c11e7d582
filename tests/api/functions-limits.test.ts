import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { pruneRunLogs } from "../../server/domains/functions/service.ts";
import { functionActivations } from "../../server/domains/functions/tables.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { signUp, type TestUser, useTestApp } from "../support/api.ts";
import { putOnPlan } from "../support/plans.ts";

// Functions against a careless or hostile user: the plan's cap on functions per account, the largest
// memory size a function may have, and how long runs' logs are kept (schemas/catalogue/function-limits.json),
// shown with the functions overview and permissions.

const ctx = useTestApp();
const db = () => openDatabase(ctx.app.database.url, 2);

const create = (user: TestUser, name: string) =>
  user.client.gql<{ createFunction: { id: string } }>(
    "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
    { input: { name, code: "function main(p) { console.log('ran', p.data); return 1; }" } },
  );

async function created(user: TestUser, name: string) {
  const answer = await create(user, name);
  expect(answer.errors).toBeUndefined();
  return answer.data?.createFunction.id as string;
}

const PLAN =
  "functions functionLimit logRetentionDays logLinesPerRun logCharsPerRun includedGbSeconds maxMemoryMb runningMemoryMb";

describe("functions per account", () => {
  it("are capped by the plan at create, naming the limit; the overview shows the plan's limits", async () => {
    const owner = await signUp(ctx.app);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await created(owner, `f${i}`));
    const refused = await create(owner, "one too many");
    expect(refused.errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(refused.errors?.[0].message).toBe(
      "Your plan allows 10 functions, and this account has them. Delete one or upgrade your plan.",
    );
    const quick = await owner.client.gql(
      'mutation { createQuickFunction(input: { templateId: "hello-user-data", name: "quick" }) { id } }',
    );
    expect(quick.errors?.[0].extensions?.code).toBe("CONFLICT");

    const { functionsPlan } = await owner.client.gqlOk<{ functionsPlan: Record<string, number> }>(
      `{ functionsPlan { ${PLAN} } }`,
    );
    expect(functionsPlan).toEqual({
      functions: 10,
      functionLimit: 10,
      logRetentionDays: 3,
      logLinesPerRun: 200,
      logCharsPerRun: 65_536,
      includedGbSeconds: 100_000,
      maxMemoryMb: 256,
      runningMemoryMb: 512,
    });

    await owner.client.gqlOk("mutation($id: ID!) { deleteFunction(id: $id) { success } }", { id: ids[0] });
    await created(owner, "after a delete");
  });

  it("taken side by side, still stop at the plan's cap", async () => {
    const owner = await signUp(ctx.app);
    for (let i = 0; i < 8; i++) await created(owner, `f${i}`);
    const answers = await Promise.all([0, 1, 2, 3].map((i) => create(owner, `parallel ${i}`)));
    expect(answers.filter((a) => a.errors === undefined)).toHaveLength(2);
    const { functionsPlan } = await owner.client.gqlOk<{ functionsPlan: { functions: number } }>(
      "{ functionsPlan { functions } }",
    );
    expect(functionsPlan.functions).toBe(10);
  });
});

describe("run logs", () => {
  it("are emptied once older than the plan keeps them; the run stays in the history", async () => {
    const free = await signUp(ctx.app);
    const paying = await signUp(ctx.app);
    const database = db();
    try {
      await putOnPlan(database, paying.viewer.id, "b6_build");
      const runOf = async (user: TestUser) => {
        const id = await created(user, "logger");
        await user.client.gqlOk("mutation($input: CallFunctionInput!) { callFunction(input: $input) { id } }", {
          input: { id, params: "x" },
        });
        return id;
      };
      const freeFn = await runOf(free);
      const payingFn = await runOf(paying);
      const logsOf = async (user: TestUser, id: string) => {
        const { functionLogs } = await user.client.gqlOk<{ functionLogs: { edges: { node: { message: string } }[] } }>(
          "query($id: ID!) { functionLogs(id: $id) { edges { node { message } } } }",
          { id },
        );
        return functionLogs.edges.map((e) => e.node.message);
      };
      expect(await logsOf(free, freeFn)).toEqual(["ran x"]);

      // Both runs 4 days old: past Free's 3 days, within Build's 7.
      const fourDaysAgo = new Date(Date.now() - 4 * 86_400_000);
      await database
        .update(functionActivations)
        .set({ createdAt: fourDaysAgo })
        .where(sql`${functionActivations.functionId} in (${freeFn}, ${payingFn})`);
      expect(await pruneRunLogs(database)).toBeGreaterThanOrEqual(1);
      expect(await logsOf(free, freeFn)).toEqual([]);
      expect(await logsOf(paying, payingFn)).toEqual(["ran x"]);
      const { functionHistory } = await free.client.gqlOk<{ functionHistory: { edges: unknown[] } }>(
        "query($id: ID!) { functionHistory(id: $id) { edges { node { id } } } }",
        { id: freeFn },
      );
      expect(functionHistory.edges).toHaveLength(1);

      // 8 days old: past Build's 7 too.
      await database
        .update(functionActivations)
        .set({ createdAt: new Date(Date.now() - 8 * 86_400_000) })
        .where(eq(functionActivations.functionId, payingFn));
      await pruneRunLogs(database);
      expect(await logsOf(paying, payingFn)).toEqual([]);
    } finally {
      await database.$client.end();
    }
  });
});

const memorySizes = async (user: TestUser) =>
  (
    await user.client.gqlOk<{ functionPermissions: { memorySizes: number[] } }>(
      "{ functionPermissions { memorySizes } }",
    )
  ).functionPermissions.memorySizes;

const update = (user: TestUser, input: Record<string, unknown>) =>
  user.client.gql<{ updateFunction: { version: number } }>(
    "mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { version } }",
    { input },
  );

const tooLarge = (pointer: string, largest: number) => [
  {
    pointer,
    message: `Your plan allows functions up to ${largest} MB of memory. Choose ${largest} MB or less, or upgrade your plan.`,
  },
];

describe("memory sizes", () => {
  it("are the plan's: listed in the permissions, larger ones refused at create, update and test", async () => {
    const free = await signUp(ctx.app);
    const database = db();
    try {
      expect(await memorySizes(free)).toEqual([128, 256]);
      const code = "function main(p) { return 1; }";
      const refused = await free.client.gql(
        "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
        { input: { name: "big", code, memoryMb: 1024 } },
      );
      expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
      expect(refused.errors?.[0].extensions?.fields).toEqual(tooLarge("/memoryMb", 256));
      const tested = await free.client.gql(
        "mutation($input: TestFunctionInput!) { testFunction(input: $input) { success } }",
        { input: { code, memoryMb: 384 } },
      );
      expect(tested.errors?.[0].extensions?.fields).toEqual(tooLarge("/memoryMb", 256));

      const fits = await free.client.gqlOk<{ createFunction: { id: string } }>(
        "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
        { input: { name: "fits", code, memoryMb: 256 } },
      );
      const id = fits.createFunction.id;
      expect((await update(free, { id, memoryMb: 512 })).errors?.[0].extensions?.fields).toEqual(
        tooLarge("/memoryMb", 256),
      );
      expect((await update(free, { id, memoryMb: 128 })).data?.updateFunction.version).toBe(2);

      await putOnPlan(database, free.viewer.id, "b6_build");
      expect(await memorySizes(free)).toEqual([128, 256, 384, 512]);
      const { functionsPlan } = await free.client.gqlOk<{ functionsPlan: Record<string, number> }>(
        "{ functionsPlan { maxMemoryMb runningMemoryMb } }",
      );
      expect(functionsPlan).toEqual({ maxMemoryMb: 512, runningMemoryMb: 2048 });
      expect((await update(free, { id, memoryMb: 512 })).data?.updateFunction.version).toBe(3);
      expect((await update(free, { id, memoryMb: 640 })).errors?.[0].extensions?.fields).toEqual(
        tooLarge("/memoryMb", 512),
      );
      await putOnPlan(database, free.viewer.id, "b6_accelerate");
      expect(await memorySizes(free)).toEqual([128, 256, 384, 512, 640, 768, 896, 1024]);
      expect((await update(free, { id, memoryMb: 1024 })).errors).toBeUndefined();
    } finally {
      await database.$client.end();
    }
  });

  it("past the plan after a downgrade: the function keeps its setting, its runs get and are billed the plan's largest", async () => {
    const user = await signUp(ctx.app);
    const database = db();
    try {
      await putOnPlan(database, user.viewer.id, "b6_accelerate");
      const { createFunction } = await user.client.gqlOk<{ createFunction: { id: string } }>(
        "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
        { input: { name: "large", code: "function main(p) { return p.data; }", memoryMb: 1024 } },
      );
      const id = createFunction.id;
      await putOnPlan(database, user.viewer.id, "b6_free");

      const { callFunction } = await user.client.gqlOk<{
        callFunction: { success: boolean; memoryLimit: number; duration: number; billable: number };
      }>(
        "mutation($input: CallFunctionInput!) { callFunction(input: $input) { success memoryLimit duration billable } }",
        {
          input: { id, params: 7 },
        },
      );
      expect(callFunction).toMatchObject({ success: true, memoryLimit: 256 });
      expect(callFunction.billable).toBeCloseTo(
        (256 * Math.max(1, Math.ceil(callFunction.duration))) / 1024 / 1000,
        12,
      );

      // The settings form sends the size it shows: unchanged, it is kept; a rename is not refused for it.
      expect((await update(user, { id, name: "renamed", memoryMb: 1024 })).errors).toBeUndefined();
      const { function: fn } = await user.client.gqlOk<{ function: { name: string; limits: { memory: number } } }>(
        "query($id: ID!) { function(id: $id) { name limits { memory } } }",
        { id },
      );
      expect(fn).toEqual({ name: "renamed", limits: { memory: 1024 } });
      expect((await update(user, { id, memoryMb: 512 })).errors?.[0].extensions?.fields).toEqual(
        tooLarge("/memoryMb", 256),
      );
    } finally {
      await database.$client.end();
    }
  });

  it("running at once are the plan's: a run past its MB in flight is refused with RATE_LIMITED (429), and admitted once one ends", async () => {
    const free = await signUp(ctx.app);
    const { createFunction } = await free.client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      {
        input: {
          name: "slow",
          code: "function main(p) { const end = Date.now() + 1500; while (Date.now() < end); return p.data; }",
          memoryMb: 256,
          timeoutSec: 10,
        },
      },
    );
    const call = () =>
      free.client.gql<{ callFunction: { success: boolean } }>(
        "mutation($input: CallFunctionInput!) { callFunction(input: $input) { success } }",
        { input: { id: createFunction.id, params: 1 } },
      );
    // Free runs 512 MB at once: two of its 256 MB runs.
    const running = [call(), call()];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await call();
    expect(refused.errors?.[0].extensions?.code).toBe("RATE_LIMITED");
    expect(refused.errors?.[0].message).toMatch(
      /^This account is running 512 MB of functions at once and its plan allows 512 MB; this 256 MB run would pass it\./,
    );
    // Over HTTP the same refusal is a 429.
    const overHttp = await free.client.request(`/functions/${createFunction.id}/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(overHttp.status).toBe(429);
    for (const done of await Promise.all(running)) expect(done.data?.callFunction.success).toBe(true);
    // Admitted again once the runs ended.
    expect((await call()).data?.callFunction.success).toBe(true);
  }, 30_000);
});

describe("time limits", () => {
  const tooLong = (pointer: string, longest: number) => [
    {
      pointer,
      message: `Your plan allows functions up to ${longest} s. Choose ${longest} s or less, or upgrade your plan.`,
    },
  ];

  it("past the plan's longest are refused at create, update and test naming it; a run held below its function's says why", async () => {
    const free = await signUp(ctx.app);
    const database = db();
    try {
      const { functionPermissions } = await free.client.gqlOk<{ functionPermissions: { maxTimeoutSec: number } }>(
        "{ functionPermissions { maxTimeoutSec } }",
      );
      expect(functionPermissions.maxTimeoutSec).toBe(30);
      const code = "function main(p) { return p.data; }";
      // Before: a 60 s function was created, and ran with whatever limit the run was held to, with no word.
      const refused = await free.client.gql(
        "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
        { input: { name: "long", code, timeoutSec: 60 } },
      );
      expect(refused.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
      expect(refused.errors?.[0].extensions?.fields).toEqual(tooLong("/timeoutSec", 30));
      const tested = await free.client.gql(
        "mutation($input: TestFunctionInput!) { testFunction(input: $input) { success } }",
        { input: { code, timeoutSec: 45 } },
      );
      expect(tested.errors?.[0].extensions?.fields).toEqual(tooLong("/timeoutSec", 30));

      await putOnPlan(database, free.viewer.id, "b6_build");
      const { createFunction } = await free.client.gqlOk<{ createFunction: { id: string } }>(
        "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
        { input: { name: "long", code, timeoutSec: 60 } },
      );
      const id = createFunction.id;
      await putOnPlan(database, free.viewer.id, "b6_free");
      expect((await update(free, { id, timeoutSec: 50 })).errors?.[0].extensions?.fields).toEqual(
        tooLong("/timeoutSec", 30),
      );
      // Left at 60 s by the downgrade: its runs get the plan's 30 s, and their logs say so.
      const { callFunction } = await free.client.gqlOk<{
        callFunction: { success: boolean; logs: { level: string; message: string }[] };
      }>("mutation($input: CallFunctionInput!) { callFunction(input: $input) { success logs { level message } } }", {
        input: { id, params: 7 },
      });
      expect(callFunction.success).toBe(true);
      expect(callFunction.logs[0]).toEqual({
        level: "WARNING",
        message: "This run's time limit is 30 s, not the function's 60 s: its plan allows at most 30 s.",
      });
    } finally {
      await database.$client.end();
    }
  });
});
