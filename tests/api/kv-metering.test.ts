import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { kvFilterHelpers } from "../../server/domains/kv/filter-helpers.ts";
import * as kvStore from "../../server/domains/kv/store.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { putOnPlan } from "../support/plans.ts";

// Writes by filters and functions through the key-value helpers are billed in write operations
// (schemas/catalogue/kv-limits.json) and shown in usage and on the key-value overview; reads are free.

const ctx = useTestApp();
const db = () => openDatabase(ctx.app.database.url, 2);

const WRITES =
  "calls operations points { x calls operations } periodStart periodEnd periodOperations includedOperations overageOperations pricePerMillion overageCost";

interface KvWrites {
  calls: number;
  operations: number;
  points: { x: string; calls: number; operations: number }[];
  periodStart: string;
  periodEnd: string;
  periodOperations: number;
  includedOperations: number;
  overageOperations: number;
  pricePerMillion: number | null;
  overageCost: number;
}

async function usageWrites(client: GqlClient, args = "") {
  const data = await client.gqlOk<{ usage: { startTime: string; kvWrites: KvWrites } }>(
    `{ usage${args} { startTime kvWrites { ${WRITES} } } }`,
  );
  return data.usage.kvWrites;
}

async function overview(client: GqlClient) {
  const data = await client.gqlOk<{
    kvOverview: {
      keys: number;
      keyLimit: number;
      lists: number;
      addressBooks: number;
      values: number;
      writes: KvWrites;
    };
  }>(`{ kvOverview { keys keyLimit lists addressBooks values writes { ${WRITES} } } }`);
  return data.kvOverview;
}

describe("key-value writes by filters and functions", () => {
  it("are billed per item or value written, shown in usage and on the overview, and not to another account", async () => {
    const owner = await signUp(ctx.app);
    const other = await signUp(ctx.app);
    const database = db();
    try {
      const helpers = kvFilterHelpers(database)(owner.viewer.id);
      await helpers.qnUpsertList("watch", { add_items: ["0xaa", "0xbb", "0xcc"] });
      await helpers.qnAddListItem("watch", "0xaa");
      await helpers.qnAddSet("colour", "red");
      // Reads are free.
      await helpers.qnGetList("watch");
      await helpers.qnContainsListItems("watch", ["0xaa"]);
      await helpers.qnGetSet("colour");
      await owner.client.gqlOk('mutation { createAddressBook(input: { key: "book", items: ["0x01"] }) { success } }');

      // 3 items, then 1 (a list keeps duplicates), then 1 value: 3 calls, 5 operations.
      const inUsage = await usageWrites(owner.client);
      expect(inUsage).toMatchObject({ calls: 3, operations: 5, periodOperations: 5, overageOperations: 0 });
      expect(inUsage.points.reduce((sum, p) => sum + p.operations, 0)).toBe(5);
      // A new account is on the Free plan: 100,000 operations included, none sold past them.
      expect(inUsage).toMatchObject({ includedOperations: 100_000, pricePerMillion: null, overageCost: 0 });
      expect(await usageWrites(owner.client, "(pastDay: true)")).toMatchObject({ calls: 3, operations: 5 });

      const shown = await overview(owner.client);
      expect(shown).toMatchObject({ keys: 3, keyLimit: 10, lists: 1, addressBooks: 1, values: 1 });
      expect(shown.writes).toMatchObject({ calls: 3, operations: 5, includedOperations: 100_000 });
      expect(shown.writes.points).toHaveLength(1);

      // Another account reads none of it, in usage or on its overview.
      expect(await usageWrites(other.client)).toMatchObject({
        calls: 0,
        operations: 0,
        periodOperations: 0,
        points: [],
      });
      expect(await overview(other.client)).toMatchObject({ keys: 0, writes: { calls: 0, operations: 0 } });
      const signedOut = await ctx.app.client().gql("{ kvOverview { keys } }");
      expect(signedOut.errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
    } finally {
      await database.$client.end();
    }
  });

  it("past the included writes cost the plan's price per million, or are refused with nothing written on Free", async () => {
    const paying = await signUp(ctx.app);
    const free = await signUp(ctx.app);
    const database = db();
    try {
      await putOnPlan(database, paying.viewer.id, "b6_build");
      // A month's worth of writes in one row, as the helpers would have metered them.
      await kvStore.meterHelperWrite(database, paying.viewer.id, 1_500_000, new Date());
      await kvFilterHelpers(database)(paying.viewer.id).qnAddSet("still", "writes");
      expect(await usageWrites(paying.client)).toMatchObject({
        calls: 2,
        operations: 1_500_001,
        includedOperations: 1_000_000,
        overageOperations: 500_001,
        pricePerMillion: 5,
        overageCost: 2.5,
      });

      await kvStore.meterHelperWrite(database, free.viewer.id, 100_000, new Date());
      const helpers = kvFilterHelpers(database)(free.viewer.id);
      await expect(helpers.qnAddListItem("late", "0xaa")).rejects.toThrow(
        "Your plan includes 100,000 key-value writes from filters and functions per billing period",
      );
      expect(await helpers.qnGetList("late")).toEqual([]);
      const [{ n }] = (
        await database.execute<{ n: number }>(
          sql`select count(*)::int as n from kv_collections where account_id = ${free.viewer.id}`,
        )
      ).rows;
      expect(n).toBe(0);
      expect(await usageWrites(free.client)).toMatchObject({ calls: 1, operations: 100_000, overageCost: 0 });
    } finally {
      await database.$client.end();
    }
  });

  it("count each minute in one billing period: periods that meet at a second share no row and lose none", async () => {
    const owner = await signUp(ctx.app);
    const database = db();
    try {
      const boundary = new Date("2026-10-05T12:00:30Z");
      await kvStore.meterHelperWrite(database, owner.viewer.id, 2, new Date("2026-10-05T11:59:59Z"));
      await kvStore.meterHelperWrite(database, owner.viewer.id, 3, new Date("2026-10-05T12:00:10Z"));
      await kvStore.meterHelperWrite(database, owner.viewer.id, 5, new Date("2026-10-05T12:00:50Z"));
      const before = await kvStore.helperWrites(database, owner.viewer.id, new Date("2026-09-05T12:00:30Z"), boundary);
      const after = await kvStore.helperWrites(database, owner.viewer.id, boundary, new Date("2026-11-05T12:00:30Z"));
      // The boundary's minute (12:00) is the later period's first.
      expect(before).toEqual({ calls: 1, operations: 2 });
      expect(after).toEqual({ calls: 2, operations: 8 });
    } finally {
      await database.$client.end();
    }
  });
});
