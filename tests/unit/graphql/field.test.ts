import { describe, expect, it } from "vitest";
import type { Context, Principal } from "../../../server/graphql/context.ts";
import { field, fieldWithInput, present, publicField } from "../../../server/graphql/field.ts";

const ACCOUNT = "9c3c2c52-4b1e-4a43-9a57-1f0a3ad0f8d1";

function context(principal: Principal | null): Context {
  // Only the principal is read by the helper; the rest of the context is not reached in these tests.
  return { principal } as Context;
}

const member = (role: Principal["role"]): Principal => ({
  userId: "u1",
  accountId: ACCOUNT,
  role,
  sessionTokenHash: "h",
  accessTokenId: null,
});

async function errorOf(run: () => unknown) {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("field", () => {
  it("hands the rule the caller's account, arguments and parent", async () => {
    const resolve = field(
      "VIEWER",
      ({ accountId, args, parent }: { accountId: string; args: { id: string }; parent: string }) => ({
        accountId,
        id: args.id,
        parent,
      }),
    );
    expect(await resolve("the parent", { id: "e1" }, context(member("VIEWER")))).toEqual({
      accountId: ACCOUNT,
      id: "e1",
      parent: "the parent",
    });
  });

  it("refuses an anonymous caller (UNAUTHENTICATED) and a lower role (FORBIDDEN) without running the rule", async () => {
    let ran = false;
    const resolve = field("ADMIN", () => {
      ran = true;
    });
    expect(await errorOf(() => resolve({}, {}, context(null)))).toMatchObject({ code: "UNAUTHENTICATED" });
    expect(await errorOf(() => resolve({}, {}, context(member("VIEWER"))))).toMatchObject({ code: "FORBIDDEN" });
    expect(ran).toBe(false);
    resolve({}, {}, context(member("OWNER")));
    expect(ran).toBe(true);
  });
});

describe("fieldWithInput", () => {
  it("checks args.input against its entity schema and hands it on", async () => {
    const resolve = fieldWithInput("ADMIN", { schema: "endpoint#/$defs/labelInput" }, ({ input }) => input.label);
    expect(await resolve({}, { input: { label: "Main" } }, context(member("ADMIN")))).toBe("Main");
  });

  it("refuses input the schema refuses, by JSON pointer, before the rule runs", async () => {
    let ran = false;
    const resolve = fieldWithInput(
      "ADMIN",
      { schema: "endpoint#/$defs/createInput", of: (args: { chain: unknown }) => ({ chain: args.chain }) },
      () => {
        ran = true;
      },
    );
    const error = await errorOf(() => resolve({}, { chain: 5 }, context(member("ADMIN"))));
    expect(error).toMatchObject({ code: "BAD_USER_INPUT" });
    expect((error as { fields: { pointer: string }[] }).fields.map((f) => f.pointer)).toEqual(
      expect.arrayContaining(["/chain", "/network"]),
    );
    expect(ran).toBe(false);
  });

  it("checks the role before the input: a viewer learns nothing about the input's shape", async () => {
    const resolve = fieldWithInput("ADMIN", { schema: "endpoint#/$defs/labelInput" }, () => "ran");
    expect(await errorOf(() => resolve({}, { input: {} }, context(member("VIEWER"))))).toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("publicField", () => {
  it("runs for anyone, with the caller when there is one", async () => {
    const resolve = publicField(({ principal }) => principal?.accountId ?? "anonymous");
    expect(await resolve({}, {}, context(null))).toBe("anonymous");
    expect(await resolve({}, {}, context(member("VIEWER")))).toBe(ACCOUNT);
  });
});

describe("present", () => {
  it("drops null and undefined arguments and keeps false and zero", () => {
    expect(present({ a: null, b: undefined, c: false, d: 0, e: "x" })).toEqual({ c: false, d: 0, e: "x" });
  });
});
