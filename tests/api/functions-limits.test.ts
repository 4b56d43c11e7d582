import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { pruneRunLogs } from "../../server/domains/functions/service.ts";
import { functionActivations } from "../../server/domains/functions/tables.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { signUp, type TestUser, useTestApp } from "../support/api.ts";
import { putOnPlan } from "../support/plans.ts";

// Functions against a careless or hostile user: the plan's cap on functions per account, and how long
// runs' logs are kept (schemas/catalogue/function-limits.json), shown with the functions overview.

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

const PLAN = "functions functionLimit logRetentionDays logLinesPerRun logCharsPerRun includedGbSeconds";

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
