import { describe, expect, it } from "vitest";
import { signUp, type TestUser, useTestApp } from "../support/api.ts";

// Functions against what a careless or hostile author or caller sends: text PostgreSQL cannot keep,
// errors placed outside the author's code, blank names, refused bodies and cursors past PostgreSQL's dates.

const ctx = useTestApp();

async function newFunction(user: TestUser, code: string, name = "probe") {
  const { createFunction } = await user.client.gqlOk<{ createFunction: { id: string } }>(
    "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
    { input: { name, code } },
  );
  return createFunction.id;
}

const callFunction = (user: TestUser, id: string) =>
  user.client.gql<{
    callFunction: {
      id: string;
      success: boolean;
      error: string | null;
      errorKind: string | null;
      logs: { message: string }[];
    };
  }>(
    "mutation($input: CallFunctionInput!) { callFunction(input: $input) { id success error errorKind logs { message } } }",
    {
      input: { id },
    },
  );

const PROTOTYPE_KEY_REFUSED =
  'The body is not accepted: JSON objects may not have a "__proto__" or "constructor.prototype" key.';

const post = (user: TestUser, id: string, body: string, contentType = "application/json") =>
  user.client.request(`/functions/${id}/call`, { method: "POST", headers: { "content-type": contentType }, body });

describe("a run's text PostgreSQL cannot keep", () => {
  it("a run that logs or throws NUL is recorded and billed, NUL kept as U+FFFD", async () => {
    const owner = await signUp(ctx.app);
    const logs = await newFunction(owner, 'function main() { console.log("a\\u0000b"); return "c\\u0000d"; }');
    const called = await callFunction(owner, logs);
    expect(called.errors).toBeUndefined();
    expect(called.data?.callFunction).toMatchObject({ success: true, logs: [{ message: "a\uFFFDb" }] });

    const throws = await newFunction(owner, 'function main() { throw new Error("x\\u0000y"); }');
    const failed = await callFunction(owner, throws);
    expect(failed.errors).toBeUndefined();
    expect(failed.data?.callFunction.error).toContain("x\uFFFDy");
    const overHttp = await post(owner, throws, "{}");
    expect(overHttp.status).toBe(502);

    const { functionHistory } = await owner.client.gqlOk<{
      functionHistory: { edges: { node: { billable: number } }[] };
    }>("query($id: ID!) { functionHistory(id: $id) { edges { node { billable } } } }", { id: throws });
    expect(functionHistory.edges).toHaveLength(2);
    expect(functionHistory.edges[0].node.billable).toBeGreaterThan(0);
  });
});

describe("a result too large to answer", () => {
  it("fails the run past 6 MiB, saying its size; 6 MiB itself is answered", async () => {
    const owner = await signUp(ctx.app);
    const run = (length: number) =>
      owner.client.gqlOk<{
        testFunction: { success: boolean; size: number; error: string | null; errorKind: string | null };
      }>("mutation($input: TestFunctionInput!) { testFunction(input: $input) { success size error errorKind } }", {
        input: { code: `function main() { return "x".repeat(${length}); }`, memoryMb: 256 },
      });
    const tooLarge = await run(7 * 1024 * 1024);
    expect(tooLarge.testFunction).toEqual({
      success: false,
      size: 0,
      errorKind: "RESULT_TOO_LARGE",
      error: "main returned at least 7.0 MiB of JSON; a result is at most 6 MiB.",
    });
    const atTheLimit = await run(6 * 1024 * 1024 - 2);
    expect(atTheLimit.testFunction).toMatchObject({ success: true, size: 6 * 1024 * 1024 });
  });

  it("a stored function's oversized run is refused in the sandbox, recorded as failed and billed", async () => {
    const owner = await signUp(ctx.app);
    const id = await newFunction(owner, 'function main() { return "é".repeat(4 * 1024 * 1024); }');
    const called = await callFunction(owner, id);
    expect(called.data?.callFunction).toMatchObject({
      success: false,
      errorKind: "RESULT_TOO_LARGE",
      error: "main returned 8.0 MiB of JSON; a result is at most 6 MiB.",
    });
    const { functionHistory } = await owner.client.gqlOk<{
      functionHistory: { edges: { node: { success: boolean; size: number; billable: number } }[] };
    }>("query($id: ID!) { functionHistory(id: $id) { edges { node { success size billable } } } }", { id });
    expect(functionHistory.edges).toHaveLength(1);
    expect(functionHistory.edges[0].node).toMatchObject({ success: false, size: 0 });
    expect(functionHistory.edges[0].node.billable).toBeGreaterThan(0);
  });
});

describe("errors as the function's author reads them", () => {
  it("code without main names no place in the wrapper; limits are the function's, not a filter's", async () => {
    const owner = await signUp(ctx.app);
    const noMain = await owner.client.gql(
      'mutation { createFunction(input: { name: "x", code: "var main = 5;" }) { id } }',
    );
    expect(noMain.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/code", message: "The code fails as it loads: Error: The code defines no function main(params)." },
    ]);
    const unfinished = await owner.client.gql(
      'mutation { createFunction(input: { name: "x", code: "function main(p) {\\n  return p;" }) { id } }',
    );
    expect(unfinished.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/code", message: "The code does not compile: SyntaxError: Unexpected end of input (line 2)" },
    ]);
    // The kind of failure is its own field, labelled in the console; the message is without it.
    const { testFunction } = await owner.client.gqlOk<{ testFunction: { error: string; errorKind: string } }>(
      'mutation { testFunction(input: { code: "function main() { while (true) {} }", timeoutSec: 1 }) { error errorKind } }',
    );
    expect(testFunction).toEqual({
      errorKind: "TIMEOUT",
      error: "the function ran longer than its time limit of 1000 ms",
    });
    const thrown = await owner.client.gqlOk<{ testFunction: { error: string; errorKind: string } }>(
      'mutation { testFunction(input: { code: "function main() {\\n  throw new Error(\\"no\\");\\n}" }) { error errorKind } }',
    );
    expect(thrown.testFunction).toEqual({ errorKind: "RUNTIME", error: "Error: no (line 2, column 9)" });
  });

  it("a name of only spaces (or a tab) is refused, on create and on update", async () => {
    const owner = await signUp(ctx.app);
    const blank = await owner.client.gql(
      'mutation { createFunction(input: { name: "   ", code: "function main() {}" }) { id } }',
    );
    expect(blank.errors?.[0].extensions?.fields).toEqual([
      { pointer: "/name", message: "This contains characters that are not allowed." },
    ]);
    const id = await newFunction(owner, "function main() {}", " spaced name ");
    const renamed = await owner.client.gql(`mutation { updateFunction(input: { id: "${id}", name: "\\t" }) { id } }`);
    expect(renamed.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
  });
});

describe("code that crashes the sandbox on purpose, over and over", () => {
  it("fails no other account's runs after its first crash: its account's code runs in the quarantine", async () => {
    const [attacker, victim] = [await signUp(ctx.app), await signUp(ctx.app)];
    // One allocation far past the limit: V8 loses control of the isolate and the sandbox process is replaced.
    const crash = () =>
      attacker.client.gqlOk<{ testFunction: { success: boolean; error: string; errorKind: string } }>(
        'mutation { testFunction(input: { code: "function main() { new Array(1e8).fill(0) }" }) { success error errorKind } }',
      );
    expect((await crash()).testFunction).toMatchObject({ success: false, errorKind: "MEMORY" });
    // Another account's run in flight when the attacker crashes its code again (V8 takes seconds of last-resort
    // collections to give up on an isolate; the run outlasts them): it ends well.
    const running = victim.client.gqlOk<{ testFunction: { success: boolean; result: unknown; error: string } }>(
      'mutation { testFunction(input: { code: "function main() { const t = Date.now(); while (Date.now() - t < 8000); return 7 }", timeoutSec: 20 }) { success result error } }',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await crash()).testFunction).toMatchObject({ success: false, errorKind: "MEMORY" });
    expect((await running).testFunction).toEqual({ success: true, result: 7, error: null });
  }, 30_000);
});

describe("a function's text with an unpaired surrogate", () => {
  it("is refused on its field (name, code, params, a call's body), not stored as U+FFFD", async () => {
    const owner = await signUp(ctx.app);
    const UNPAIRED = "This contains an unpaired UTF-16 surrogate (half of a character), which cannot be stored.";
    const create = (input: Record<string, unknown>) =>
      owner.client.gql("mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }", { input });
    const named = await create({ name: "half \ud800", code: "function main() { return 1; }" });
    expect(named.errors?.[0].extensions).toEqual({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/name", message: UNPAIRED }],
    });
    const coded = await create({ name: "half", code: 'function main() { return "\udfff"; }' });
    expect(coded.errors?.[0].extensions).toEqual({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/code", message: UNPAIRED }],
    });

    const id = await newFunction(owner, "function main(p) { return p.user_data; }");
    const called = await owner.client.gql(
      "mutation($input: CallFunctionInput!) { callFunction(input: $input) { id } }",
      {
        input: { id, params: { user_data: "\ud800" } },
      },
    );
    expect(called.errors?.[0].extensions).toEqual({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/params/user_data", message: UNPAIRED }],
    });
    const posted = await post(owner, id, '{"user_data":"\\ud800"}');
    expect(posted.status).toBe(400);
    expect(await posted.json()).toEqual({
      error: "The input is not valid.",
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/user_data", message: UNPAIRED }],
    });
  });
});

describe("the HTTP address refuses a body in the API's words", () => {
  it("too large, not JSON, empty or of another type: BAD_USER_INPUT with the status", async () => {
    const owner = await signUp(ctx.app);
    const id = await newFunction(owner, "function main(p) { return p.user_data; }");
    const large = await post(owner, id, JSON.stringify({ user_data: "x".repeat(300 * 1024) }));
    expect(large.status).toBe(413);
    expect(await large.json()).toEqual({
      error: "The call's body is too large: send at most 256 KiB of JSON.",
      code: "BAD_USER_INPUT",
    });
    const broken = await post(owner, id, "{");
    expect(broken.status).toBe(400);
    expect(await broken.json()).toEqual({ error: "The body is not valid JSON.", code: "BAD_USER_INPUT" });
    const empty = await post(owner, id, "");
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ code: "BAD_USER_INPUT" });
    const form = await post(owner, id, "user_data=1", "application/x-www-form-urlencoded");
    expect(form.status).toBe(415);
    expect(await form.json()).toEqual({ error: "Send the call as application/json.", code: "BAD_USER_INPUT" });
    expect((await post(owner, id, '{"user_data":{"a":1}}')).status).toBe(200);
    const got = await owner.client.request(`/functions/${id}/call`);
    expect(got.status).toBe(405);
    expect(got.headers.get("allow")).toBe("POST");
    expect(await got.json()).toEqual({ error: "Call a function with POST and a JSON body.", code: "BAD_USER_INPUT" });
  });

  it("a body with a __proto__ or constructor.prototype key: refused, saying why", async () => {
    const owner = await signUp(ctx.app);
    const id = await newFunction(owner, "function main(p) { return p.user_data; }");
    for (const body of ['{"user_data":{"__proto__":{"x":1}}}', '{"user_data":{"constructor":{"prototype":{}}}}']) {
      const refused = await post(owner, id, body);
      expect(refused.status, body).toBe(400);
      expect(await refused.json()).toEqual({ error: PROTOTYPE_KEY_REFUSED, code: "BAD_USER_INPUT" });
    }
  });
});

describe("history and logs cursors", () => {
  it("a cursor at a date PostgreSQL does not have is BAD_USER_INPUT, not INTERNAL", async () => {
    const owner = await signUp(ctx.app);
    const id = await newFunction(owner, 'function main() { console.log("x"); return 1; }');
    await callFunction(owner, id);
    const uuid = "00000000-0000-4000-8000-000000000000";
    for (const at of ["0000-06-01T00:00:00.000Z", "+099999-01-01T00:00:00.000Z"]) {
      const history = await owner.client.gql(
        "query($id: ID!, $after: String) { functionHistory(id: $id, after: $after) { totalCount: edges { cursor } } }",
        {
          id,
          after: Buffer.from(JSON.stringify([at, uuid])).toString("base64url"),
        },
      );
      expect(history.errors?.[0].extensions, at).toMatchObject({
        code: "BAD_USER_INPUT",
        fields: [{ pointer: "/after" }],
      });
      const logs = await owner.client.gql(
        "query($id: ID!, $after: String) { functionLogs(id: $id, after: $after) { edges { cursor } } }",
        {
          id,
          after: Buffer.from(JSON.stringify([at, uuid, 1])).toString("base64url"),
        },
      );
      expect(logs.errors?.[0].extensions, at).toMatchObject({
        code: "BAD_USER_INPUT",
        fields: [{ pointer: "/after" }],
      });
    }
  });
});
