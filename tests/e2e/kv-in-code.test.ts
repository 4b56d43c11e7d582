// The key-value store used from code, end to end: an address book uploaded from a file (its progress bar
// seen), the "address-book-transfers" filter template tested in a stream's Filter tab on a block with a
// transfer to one of its addresses (a match), and a function that checks the address book and writes
// through qnLib, run from its Run tab: its metrics count the runs, and the key-value overview and the
// usage screen show the writes and the runs' GB-seconds billed.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { DEMO_PASSWORD, screenshot, useE2E } from "./harness.ts";
import { runOperation } from "./operations.ts";

// A chain of our own as Ethereum Mainnet's upstream, mining a block per transaction, so the test sends
// the transfer the filter looks for and knows its block.
const anvil = await startAnvil({ chainId: 1, blockTimeSeconds: 0 });
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-kv-code-")), "networks.json");
writeFileSync(
  networksFile,
  JSON.stringify({
    local: { networks: [] },
    upstreams: { "ethereum-mainnet": { http: anvil.httpUrl, ws: anvil.wsUrl } },
  }),
);
const e2e = useE2E({ env: { NODEPLANE_NETWORKS_CONFIG: networksFile } });
afterAll(() => anvil.stop());

const WATCHED = `0x${"beef".padStart(40, "0")}`;

async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(anvil.httpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** A row of the detail view titled `view`, found by its label. */
const detailRow = (page: Page, view: string, label: string) =>
  page.locator('[data-view="detail"]', { hasText: view }).locator(".ant-descriptions-row", { hasText: label }).first();
const KV_WRITES = "Writes by filters and functions this billing period";
const USAGE_KV_WRITES = "Key-value writes by filters and functions";
const USAGE_FUNCTION_RUNS = "Function runs in GB-seconds";

const FUNCTION_CODE = `async function main(params) {
  const who = String(params.user_data.address).toLowerCase();
  const [watched] = await qnLib.qnContainsAddressBookItems("watched_addresses", [who]);
  if (watched) await qnLib.qnAddListItem("seen_addresses", who);
  console.log("checked", who, watched);
  return { who, watched };
}`;

describe("key-value store used from code", () => {
  it("uploads an address book from a file, matches a transfer with it in a filter test, and runs a function on it", async () => {
    // 30,000 addresses (about 1.3 MB, two parts of 1 MiB), the watched one among them.
    const addresses = Array.from({ length: 30_000 }, (_, i) => `0x${(i + 0x10000).toString(16).padStart(40, "0")}`);
    addresses[12_345] = WATCHED;
    const file = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-kv-code-")), "watched.txt");
    writeFileSync(file, `${addresses.join("\n")}\n`);

    const page = await e2e.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto("/");
    await page.getByLabel("Email").fill("demo@nodeplane.local");
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();

    // Upload: each part takes a moment, so the bar is seen moving.
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /address books/i })
      .click();
    await page.getByText("No address books yet").waitFor();
    await page.route("**/kv-uploads/**", async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await route.continue();
    });
    await page.getByLabel("Key to upload into").fill("watched_addresses");
    await page.getByLabel("File to upload").setInputFiles(file);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText(/Part 2 of 2/).waitFor();
    await expect(page.locator("[data-widget=kv-upload] .ant-progress").isVisible()).resolves.toBe(true);
    await screenshot(page, "kv-code-01-upload-progress");
    await page.getByText("Added 30,000 addresses to watched_addresses.").waitFor({ timeout: 60_000 });
    await page.unroute("**/kv-uploads/**");

    // A transfer to the watched address, in a block of its own.
    const [sender] = await rpc<string[]>("eth_accounts");
    const hash = await rpc<string>("eth_sendTransaction", [{ from: sender, to: WATCHED, value: "0x2a" }]);
    let receipt: { blockNumber: string } | null = null;
    await expect
      .poll(async () => {
        receipt = await rpc<{ blockNumber: string } | null>("eth_getTransactionReceipt", [hash]);
        return receipt !== null;
      })
      .toBe(true);
    const block = Number.parseInt((receipt as { blockNumber: string } | null)?.blockNumber ?? "", 16);

    // The template tested on that block in a (paused) stream's Filter tab: the transfer matches.
    const { createStream } = await runOperation(page, "CreateStream", {
      input: {
        name: "Watched transfers",
        network: "ethereum-mainnet",
        dataset: "BLOCK",
        destination: "WEBHOOK",
        // Nothing listens there: the stream stays paused and is only tested.
        destinationAttributes: { url: "http://127.0.0.1:9/hook", securityToken: "e2e-secret", maxRetry: 1 },
        startRange: 1,
      },
    });
    await page.goto(`/streams/${createStream.id}/filter`);
    await page.getByLabel("Template").click();
    await page
      .locator(".ant-select-dropdown:visible")
      .getByText("Transfers to or from addresses in an address book", { exact: true })
      .click();
    await expect.poll(() => page.getByLabel("Filter function").inputValue()).toContain("watched_addresses");
    await page.getByLabel("Block number").fill(String(block));
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByTestId("filter-result");
    await expect.poll(() => result.textContent(), { timeout: 20_000 }).toContain(hash);
    const matched = (await result.textContent()) ?? "";
    expect(matched).toContain(WATCHED);
    expect(matched).toContain('"NATIVE"');
    await screenshot(page, "kv-code-02-filter-match");

    // A function that checks the address book and records what it saw: run twice from its Run tab.
    const { createFunction } = await runOperation(page, "CreateFunction", {
      input: { name: "Watch checker", code: FUNCTION_CODE },
    });
    await page.goto(`/functions/${createFunction.id}`);
    await page.getByRole("heading", { name: "Watch checker" }).waitFor();
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await page.getByLabel("User data (JSON)").fill(JSON.stringify({ address: WATCHED }));
    for (let i = 0; i < 2; i++) {
      // Each run's answer is awaited (the first warms the function's isolate, which takes a while under load).
      const answered = page.waitForResponse(
        (response) =>
          response.url().endsWith("/graphql") && (response.request().postData() ?? "").includes("callFunction"),
        { timeout: 60_000 },
      );
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await answered;
      await expect
        .poll(() => page.getByText("Success", { exact: true }).count(), { timeout: 30_000 })
        .toBeGreaterThan(0);
    }
    await expect.poll(() => page.getByText('"watched":true').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await screenshot(page, "kv-code-03-function-run");

    // Its metrics: two runs, GB-seconds billed, the charts drawn.
    await page.getByRole("link", { name: "Metrics", exact: true }).click();
    const totals = page.locator(".ant-descriptions").first();
    await expect.poll(async () => (await totals.textContent()) ?? "", { timeout: 30_000 }).toMatch(/Runs\s*2/);
    await expect
      .poll(async () => (await totals.textContent()) ?? "", { timeout: 30_000 })
      .toMatch(/Billed \(GB-s\)\s*0\.\d+ GB-s/);
    await page.locator('[data-view="chart"] svg path').filter({ visible: true }).first().waitFor();
    await screenshot(page, "kv-code-04-function-metrics");

    // The writes it made through qnLib are billed: two calls, one item each (the list keeps duplicates).
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /overview$/i })
      .click();
    await page.getByRole("heading", { name: "Key-value store" }).waitFor();
    await expect
      .poll(async () => (await detailRow(page, KV_WRITES, "Helper calls").textContent()) ?? "", { timeout: 30_000 })
      .toMatch(/2$/);
    await expect
      .poll(
        async () => (await detailRow(page, KV_WRITES, "Write operations this billing period").textContent()) ?? "",
        {
          timeout: 30_000,
        },
      )
      .toMatch(/2$/);
    expect(await detailRow(page, KV_WRITES, "Included in the plan").textContent()).toMatch(/1,000,000$/);
    await page.locator('[data-view="chart"] svg path').filter({ visible: true }).first().waitFor();
    await screenshot(page, "kv-code-05-kv-overview");

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /usage/i }).click();
    await expect
      .poll(async () => (await detailRow(page, USAGE_KV_WRITES, "Write operations").textContent()) ?? "", {
        timeout: 30_000,
      })
      .toMatch(/2$/);
    // The two runs are billed in GB-seconds, shown beside the writes (issue 18).
    expect(await detailRow(page, USAGE_FUNCTION_RUNS, "Runs").textContent()).toMatch(/2$/);
    expect(await detailRow(page, USAGE_FUNCTION_RUNS, "Included in the plan").textContent()).toMatch(/1,000,000$/);
    await screenshot(page, "kv-code-06-usage");
    expect(e2e.pageErrors).toEqual([]);
  }, 240_000);
});
