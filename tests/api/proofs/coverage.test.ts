import { describe, expect, it } from "vitest";
import { useTestApp } from "../../support/api.ts";
import { ID_ARGS, idArguments, NOT_OWNED_IDS, operations, resolverOf, SELF_SERVICE } from "./operations.ts";

/** The tables the proofs read name only what the SDL has, and every operation is covered or listed. */
describe("the proofs cover every operation of the SDL", () => {
  // The resolvers are the running service's: each domain's plugin makes its map from what it is given.
  const ctx = useTestApp();
  const ops = operations();
  const keys = ops.flatMap((op) => idArguments(op).map((arg) => `${op.name}.${arg}`));

  it("every operation has a resolver the input proofs can read", () => {
    expect(ops.filter((op) => resolverOf(op, ctx.app.resolvers) === undefined).map((op) => op.name)).toEqual([]);
  });

  it("every id argument names a kind of thing the tenancy proof seeds, or is listed with why not", () => {
    expect(keys.filter((k) => !(k in ID_ARGS) && !(k in NOT_OWNED_IDS))).toEqual([]);
  });

  it("the tables name no argument or operation the SDL does not have", () => {
    const stale = [...Object.keys(ID_ARGS), ...Object.keys(NOT_OWNED_IDS)].filter((k) => !keys.includes(k));
    expect(stale).toEqual([]);
    const mutations = ops.filter((op) => op.type === "mutation").map((op) => op.name);
    expect(Object.keys(SELF_SERVICE).filter((name) => !mutations.includes(name))).toEqual([]);
  });
});
