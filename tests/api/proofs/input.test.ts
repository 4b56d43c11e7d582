import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GqlError, TestUser } from "../../support/api.ts";
import { NETWORK, type StreamsTestApp, startReceiver, startStreamsAppAsOwner } from "../streams-harness.ts";
import { KNOWN_INPUT_FAILURES } from "./known.ts";
import { malformedVariants, names, withDeepJson } from "./malformed.ts";
import { documentFor, operations, type Samples, sampleArgs } from "./operations.ts";
import { changedTables, seedOneOfEach, snapshot } from "./seed.ts";

let t: StreamsTestApp;
let owner: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let ours: Samples;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ engine: false, blocks: 3 }));
  receiver = await startReceiver();
  ours = await seedOneOfEach(owner, NETWORK, receiver.url, { db: t.db, events: t.events });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

/**
 * Proof (c): every argument of every operation, sent malformed (see malformed.ts), is answered
 * BAD_USER_INPUT naming it by JSON pointer, and nothing is written. The owner calls with the ids of
 * their own things, so nothing but the malformed value stands in the way. Operations without arguments
 * (viewer, signOut, …) have nothing to malform.
 */
describe("malformed input is BAD_USER_INPUT naming the field, and writes nothing", () => {
  for (const op of operations().filter((o) => o.field.args.length > 0)) {
    it(`${op.type} ${op.name}`, { timeout: 120_000 }, async () => {
      const variants = malformedVariants(op, sampleArgs(op, ours, true), t.resolvers);
      const before = await snapshot(t.db);
      const failures: string[] = [];
      for (const v of variants) {
        const body = withDeepJson(JSON.stringify({ query: documentFor(op, v.args), variables: v.args }));
        const response = await owner.client.request("/graphql", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body,
        });
        const r = (await response.json()) as { errors?: GqlError[] };
        const error = r.errors?.[0];
        const code = error?.extensions?.code;
        const pointers = (error?.extensions?.fields ?? []).map((f) => f.pointer);
        if (!error) failures.push(`${v.label}: accepted`);
        else if (code !== "BAD_USER_INPUT")
          failures.push(`${v.label}: ${code ?? "no code"} (${error.message.slice(0, 80)})`);
        else if (!pointers.some((p) => names(p, v.pointer)))
          failures.push(`${v.label}: named ${JSON.stringify(pointers)}, not ${v.pointer}`);
      }
      const changed = changedTables(before, await snapshot(t.db));
      if (changed.length) failures.push(`wrote to ${changed.join(", ")}`);
      expect(failures).toEqual(KNOWN_INPUT_FAILURES[op.name] ?? []);
    });
  }
});
