import { describe, expect, it } from "vitest";
import { kvFilterHelpers } from "../../../server/domains/kv/filter-helpers.ts";
import type { Db } from "../../../server/platform/db/index.ts";

// What filters and functions may make the service hold at once: a whole list is read, kept and written
// out as JSON by the service, and a plan's list may hold a million items.

/** A database whose statements each take a few milliseconds, counting how many run at once. */
function countingDb() {
  const seen = { running: 0, most: 0, statements: 0 };
  const db = {
    async execute() {
      seen.statements++;
      seen.running++;
      seen.most = Math.max(seen.most, seen.running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.running--;
      return { rows: [{ version: "7", items: ["a", "b"] }] };
    },
  } as unknown as Db;
  return { db, seen };
}

describe("whole lists and address books read by qnLib", () => {
  it("are read one at a time per account, however many calls ask side by side", async () => {
    const { db, seen } = countingDb();
    const account = crypto.randomUUID();
    // Two callers in one process, each with its helpers from the process's key-value store.
    const helpersOf = kvFilterHelpers(db);
    const calls = [helpersOf(account), helpersOf(account)];
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0 ? calls[i % 4 === 0 ? 0 : 1].qnGetList("big") : calls[1].itemsSnapshot("big", null),
      ),
    );
    expect(answers[0]).toEqual(["a", "b"]);
    expect(answers[1]).toEqual({ version: 7, items: ["a", "b"] });
    expect(seen).toMatchObject({ statements: 10, most: 1 });
  });

  it("of another account are not held up by them", async () => {
    const { db, seen } = countingDb();
    const [one, other] = [crypto.randomUUID(), crypto.randomUUID()];
    const helpersOf = kvFilterHelpers(db);
    await Promise.all([helpersOf(one).qnGetList("a"), helpersOf(other).qnGetList("a")]);
    expect(seen.most).toBe(2);
  });
});
