import { describe, expect, it } from "vitest";
import { signIn, useTestApp } from "../../support/api.ts";
import { documentFor, operations, SELF_SERVICE, sampleArgs } from "./operations.ts";

const ctx = useTestApp();
const DEMO_PASSWORD = "demo-password-for-tests";

/**
 * Proof (a): a VIEWER calling any mutation that is not self-service is refused with FORBIDDEN, before
 * anything is looked up or validated (ids and values are samples, nothing is seeded).
 */
describe("a VIEWER may call no mutation but the self-service ones", () => {
  it("answers FORBIDDEN to every other mutation of the SDL", async () => {
    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    const samples = { ids: {}, network: "ethereum-mainnet", url: "http://127.0.0.1:9/hook", publicKey: "proof" };
    const answers: Record<string, string | undefined> = {};
    const mutations = operations().filter((op) => op.type === "mutation" && !(op.name in SELF_SERVICE));
    for (const op of mutations) {
      const r = await viewer.client.gql(documentFor(op, sampleArgs(op, samples)), sampleArgs(op, samples));
      answers[op.name] = r.errors?.[0]?.extensions?.code ?? (r.errors ? r.errors[0].message : "answered");
    }
    expect(answers).toEqual(Object.fromEntries(mutations.map((op) => [op.name, "FORBIDDEN"])));
    expect(mutations.length).toBeGreaterThan(50);
  });
});
