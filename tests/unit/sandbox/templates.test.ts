import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvmDataset, EvmDatasetReader } from "../../../server/dataplane/datasets/reader.ts";
import { testFilter } from "../../../server/dataplane/sandbox/filter.ts";
import type { FilterHelpers, FilterOutcome, FilterVersion } from "../../../server/dataplane/sandbox/types.ts";
import { ACCOUNTS, type Activity, type Anvil, makeActivity, startAnvil } from "../datasets/anvil.ts";

interface Template {
  id: string;
  title: string;
  description: string;
  filterFunction: string;
  datasets: EvmDataset[];
  filterVersion: FilterVersion;
}
const { templates } = JSON.parse(
  readFileSync(new URL("../../../schemas/catalogue/filter-templates.json", import.meta.url), "utf8"),
) as { templates: Template[] };
const byId = (id: string) => templates.find((t) => t.id === id) as Template;

let anvil: Anvil;
let activity: Activity;
let reader: EvmDatasetReader;

beforeAll(async () => {
  anvil = await startAnvil();
  activity = await makeActivity(anvil.url);
  reader = new EvmDatasetReader(anvil.url);
}, 60_000);
afterAll(async () => {
  await reader?.close();
  await anvil?.stop();
});

async function run(t: Template, helpers?: FilterHelpers): Promise<unknown> {
  const batch = await reader.fetchBatch(t.datasets[0], activity.fromBlock, activity.toBlock);
  const outcome: FilterOutcome = await testFilter(
    { source: t.filterFunction, version: t.filterVersion, helpers, owner: null },
    { data: batch.items, metadata: { dataset: t.datasets[0], network: "local" } },
  );
  if (!outcome.ok) throw new Error(`${t.id}: ${outcome.error.kind} ${outcome.error.message}`);
  return outcome.resultJson === null ? null : JSON.parse(outcome.resultJson);
}

describe("filter templates", () => {
  it("each has the catalogue fields and compiles", () => {
    expect(templates.map((t) => t.id).sort()).toEqual([
      "address-book-transfers",
      "contract-events-by-topic",
      "erc20-transfers",
      "large-native-transfers",
      "watched-addresses",
    ]);
    for (const t of templates) {
      expect(t.title && t.description && t.filterFunction && t.datasets.length).toBeTruthy();
    }
  });

  it("erc20-transfers decodes the token Transfer made on anvil", async () => {
    expect(await run(byId("erc20-transfers"))).toEqual([
      {
        token: activity.token.toLowerCase(),
        from: ACCOUNTS.bob.toLowerCase(),
        to: ACCOUNTS.carol.toLowerCase(),
        value: "1234",
        blockNumber: activity.toBlock,
        transactionHash: activity.tokenTransfer,
        logIndex: 0,
      },
    ]);
  });

  it("contract-events-by-topic keeps the Transfer log", async () => {
    const events = (await run(byId("contract-events-by-topic"))) as { transactionHash: string }[];
    expect(events.map((e) => e.transactionHash)).toEqual([activity.tokenTransfer]);
  });

  it("large-native-transfers keeps the 50 ETH transfer and not the 1 ETH one", async () => {
    expect(await run(byId("large-native-transfers"))).toEqual([
      {
        blockNumber: activity.fromBlock + 1,
        hash: activity.largeTransfer,
        from: ACCOUNTS.alice.toLowerCase(),
        to: ACCOUNTS.carol.toLowerCase(),
        valueWei: "50000000000000000000",
      },
    ]);
  });

  it("watched-addresses matches through the key-value helper", async () => {
    const list = [ACCOUNTS.bob.toLowerCase()];
    const helpers = {
      qnContainsListItems: async (key: string, items: string[]) =>
        items.map((i) => key === "watched_addresses" && list.includes(i)),
    } as Partial<FilterHelpers> as FilterHelpers;
    const matched = (await run(byId("watched-addresses"), helpers)) as { hash: string }[];
    // bob receives 1 ETH, then sends the token transfer.
    expect(matched.map((m) => m.hash)).toEqual([activity.smallTransfer, activity.tokenTransfer]);
  });

  it("watched-addresses says plainly when no key-value store is connected", async () => {
    await expect(run(byId("watched-addresses"))).rejects.toThrow(/key-value store not connected/);
  });
});
