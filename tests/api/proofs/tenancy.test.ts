import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp, type TestUser } from "../../support/api.ts";
import { NETWORK, type StreamsTestApp, startReceiver, startStreamsAppAsOwner } from "../streams-harness.ts";
import { documentFor, ID_ARGS, idArguments, operations, type Samples, sampleArgs } from "./operations.ts";
import { changedTables, seedOneOfEach, snapshot } from "./seed.ts";

let t: StreamsTestApp;
let owner: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let theirs: Samples;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ engine: false, blocks: 3 }));
  receiver = await startReceiver();
  theirs = await seedOneOfEach(owner, NETWORK, receiver.url, { db: t.db, events: t.events });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

/**
 * Proof (b): every operation that names a thing by id, called by another account with the ids of the
 * demo account's things (one of each kind, seeded through the API), answers NOT_FOUND and writes nothing.
 */
describe("another account's ids are NOT_FOUND everywhere", () => {
  it("answers NOT_FOUND to every operation that takes an id, and writes nothing", async () => {
    const stranger = await signUp(t.asTestApp);
    expect(Object.values(theirs.ids).filter(Boolean).length).toBe(26);
    const ops = operations().filter((op) => idArguments(op).some((arg) => `${op.name}.${arg}` in ID_ARGS));
    const before = await snapshot(t.db);
    const answers: Record<string, string> = {};
    for (const op of ops) {
      const args = sampleArgs(op, theirs);
      const r = await stranger.client.gql(documentFor(op, args), args);
      const error = r.errors?.[0];
      answers[op.name] = error?.extensions?.code ?? (error ? error.message : `answered ${JSON.stringify(r.data)}`);
    }
    expect(answers).toEqual(Object.fromEntries(ops.map((op) => [op.name, "NOT_FOUND"])));
    expect(changedTables(before, await snapshot(t.db))).toEqual([]);
    expect(ops.length).toBeGreaterThan(50);
  });
});
