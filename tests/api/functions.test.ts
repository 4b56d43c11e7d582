import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp, type TestUser } from "../support/api.ts";
import { blockNumbers, NETWORK, type StreamsTestApp, startStreamsAppAsOwner, waitFor } from "./streams-harness.ts";

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
  "id activationSource streamId network dataset blockNumber duration success size result error logs { level message }";

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

async function history(user: TestUser, id: string) {
  const { functionHistory } = await user.client.gqlOk<{
    functionHistory: {
      activationSource: string;
      streamId: string | null;
      blockNumber: number | null;
      success: boolean;
      result: string | null;
      error: string | null;
      logs: { message: string }[];
    }[];
  }>(`query($id: ID!) { functionHistory(id: $id, first: 100) { ${ACTIVATION_FIELDS} } }`, { id });
  return functionHistory;
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
        testFunction: { success: boolean; result: unknown; logs: { message: string }[]; error: string | null };
      }>(
        "mutation($input: TestFunctionInput!) { testFunction(input: $input) { success result size duration error logs { level message } } }",
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
    const loop = await run("function main() { for (;;) {} }", null, 1);
    expect(loop.testFunction.success).toBe(false);
    expect(loop.testFunction.error).toMatch(/^TIMEOUT/);
  });

  it("another account can neither see, call, change nor deliver to a function", async () => {
    const { createFunction: fn } = (await createFunction(owner, { name: "mine", code: counter })).data as {
      createFunction: { id: string };
    };
    const stranger = await signUp(t.asTestApp);
    const { functions } = await stranger.client.gqlOk<{ functions: { id: string }[] }>("{ functions { id } }");
    expect(functions).toEqual([]);
    for (const [query, variables] of [
      ["query($id: ID!) { function(id: $id) { id } }", { id: fn.id }],
      ["query($id: ID!) { functionHistory(id: $id) { id } }", { id: fn.id }],
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
      };
    }>(
      "mutation($input: CreateStreamWithFunctionInput!) { createStreamWithFunction(input: $input) { id status destination destinationAttributes } }",
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
    expect(stream).toMatchObject({ status: "ACTIVE", destination: "FUNCTION" });
    const functionId = stream.destinationAttributes.functionID;

    const runs = await waitFor("three runs of the function", async () => {
      const h = await history(owner, functionId);
      return h.length >= 3 ? h : null;
    });
    const ordered = [...runs].reverse();
    expect(ordered.every((r) => r.success && r.activationSource === "STREAM" && r.streamId === stream.id)).toBe(true);
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
