// Streams end to end: a filter from a template tested on a real block of the local chain, a stream to
// a webhook receiver started here, activated, delivering (metrics and logs move), paused, deleted.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { choose, oneLocalChainEnv, reloadUntil, screenshot, signInWithForm, useE2E } from "./harness.ts";

const e2e = useE2E({ env: oneLocalChainEnv("streams") });

interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

let receiver: Server;
let receiverUrl = "";
const deliveries: Delivery[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      deliveries.push({ headers: req.headers, body: text ? JSON.parse(text) : null });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const address = receiver.address();
  if (!address || typeof address === "string") throw new Error("no receiver address");
  receiverUrl = `http://127.0.0.1:${address.port}/blocks`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

const FILTER = `function main(stream) {
  const numbers = stream.data.map((block) => parseInt(block.number, 16));
  console.log("e2e filter saw", numbers.join(","));
  return { numbers, hashes: stream.data.map((block) => block.hash) };
}`;

describe("streams, end to end", () => {
  it("creates a webhook stream, tests a filter on a real block, delivers, shows metrics and logs, pauses and deletes", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInWithForm(page);

    // List → create; the destination's fields follow the destination type.
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /streams/i })
      .first()
      .click();
    await page.getByRole("heading", { name: "Streams", exact: true }).waitFor();
    await page
      .getByRole("button", { name: /create stream/i })
      .first()
      .click();
    await page.getByLabel("Name", { exact: true }).fill("E2E blocks");
    await choose(page, "Network", "Ethereum Mainnet");
    await choose(page, "Dataset", "Block");
    await page.getByLabel("Start block", { exact: true }).fill("1");
    await choose(page, "Destination", "PostgreSQL");
    await expect.poll(() => page.getByLabel("Host", { exact: true }).count()).toBe(1);
    expect(await page.getByLabel("URL", { exact: true }).count()).toBe(0);
    await choose(page, "Destination", "Webhook");
    await expect.poll(() => page.getByLabel("URL", { exact: true }).count()).toBe(1);
    expect(await page.getByLabel("Host", { exact: true }).count()).toBe(0);
    await page.getByLabel("URL", { exact: true }).fill(receiverUrl);
    await page.getByLabel("Security token", { exact: true }).fill("e2e-secret-token");
    await page.getByLabel("Retry interval (s)", { exact: true }).fill("0");
    await screenshot(page, "streams-01-create");
    await page.getByRole("button", { name: "Create stream" }).click();
    await page.waitForURL(/\/streams\/[0-9a-f-]{36}$/);
    const streamPath = new URL(page.url()).pathname;
    await page.getByRole("heading", { name: "E2E blocks" }).waitFor();
    await expect.poll(() => page.getByText("Paused", { exact: true }).count()).toBeGreaterThan(0);
    // The secret is write-only: the overview shows it masked.
    expect(await page.content()).not.toContain("e2e-secret-token");
    await screenshot(page, "streams-02-overview");

    // Filter tab: a template, tested on the chain tip, then a filter of our own, saved.
    await page.getByRole("link", { name: "Filter", exact: true }).click();
    await page.getByLabel("Template").click();
    await page.locator(".ant-select-dropdown:visible").getByText("Large native transfers", { exact: true }).click();
    await expect.poll(() => page.getByLabel("Filter function").inputValue()).toContain("MIN_WEI");
    await page.getByRole("button", { name: "Latest" }).click();
    // A chain that cannot be read says so in the widget; show that text if it happens.
    await expect
      .poll(async () => {
        const alert = page.locator("[data-widget=stream-filter-tester] .ant-alert-error");
        if (await alert.count()) return (await alert.textContent()) ?? "error";
        return Number(await page.getByLabel("Block number").inputValue()) > 0;
      })
      .toBe(true);
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByTestId("filter-result");
    await expect.poll(() => result.textContent(), { timeout: 20_000 }).toMatch(/Size/);
    await screenshot(page, "streams-03-template-run");

    await page.getByLabel("Filter function").fill(FILTER);
    await page.getByLabel("Block number").fill("2");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(() => result.textContent(), { timeout: 20_000 }).toContain('"numbers"');
    expect((await result.textContent()) ?? "").toContain("e2e filter saw 2");
    expect(await result.locator('[data-level="INFO"]').count()).toBe(1);
    await screenshot(page, "streams-04-filter-run");
    await page.getByRole("button", { name: "Save filter" }).click();
    await page.getByText("Filter saved").waitFor();

    // Activate from the overview; the receiver gets the filtered blocks.
    await page
      .getByRole("navigation", { name: / sections$/ })
      .getByRole("link", { name: "Overview", exact: true })
      .click();
    await page.getByRole("button", { name: "Activate" }).click();
    await expect.poll(() => page.getByText("Active", { exact: true }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => deliveries.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const first = deliveries[0].body as { numbers: number[] };
    expect(first.numbers[0]).toBe(1);

    // Metrics and logs move.
    await page.goto(`${streamPath}/metrics`);
    const blocksDelivered = page.locator(".ant-descriptions-row", { hasText: "Blocks delivered" });
    await reloadUntil(page, async () => Number(((await blocksDelivered.textContent()) ?? "").replace(/\D+/g, "")) > 0);
    await screenshot(page, "streams-05-metrics");
    await page.goto(`${streamPath}/logs`);
    await reloadUntil(page, async () => (await page.getByText(/e2e filter saw/).count()) > 0);
    await screenshot(page, "streams-06-logs");

    // Pause, then delete with a danger confirm.
    await page.goto(streamPath);
    await page.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => page.getByText("Paused", { exact: true }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await page.getByRole("button", { name: "Activate" }).waitFor();
    await screenshot(page, "streams-07-paused");
    await page.getByRole("button", { name: "Delete" }).click();
    const confirm = page.locator(".ant-modal-confirm", { hasText: "Delete this stream?" });
    await confirm.waitFor();
    await screenshot(page, "streams-08-delete-confirm");
    await confirm.getByRole("button", { name: "Delete" }).click();
    await page.waitForURL(/\/streams$/);
    await page.getByText("No streams yet").waitFor();

    expect(e2e.pageErrors).toEqual([]);
  }, 240_000);

  it("creates a stream with a new function, whose runs show on the function's page", async () => {
    const page = await e2e.newPage();
    await signInWithForm(page);
    await page.goto("/streams");
    await page.getByRole("button", { name: /create with a new function/i }).click();
    await page.waitForURL(/\/streams\/new-with-function$/);
    // Two fields are labelled Name (the stream's and the function's): they are told apart by id.
    await page.locator("#root_name").fill("E2E gas");
    await choose(page, "Network", "Ethereum Mainnet");
    await choose(page, "Dataset", "Block");
    await page.getByLabel("Start block", { exact: true }).fill("1");
    await page.getByLabel("End block", { exact: true }).fill("3");
    await page.locator("#root_function_name").fill("E2E gas counter");
    await page
      .getByLabel("Code", { exact: true })
      .fill("function main(params) {\n  console.log('e2e function ran');\n  return { blocks: params.data.length };\n}");
    await choose(page, "Start", "Active");
    await screenshot(page, "streams-09-create-with-function");
    await page.getByRole("button", { name: "Create stream and function" }).click();
    await page.waitForURL(/\/streams\/[0-9a-f-]{36}$/);
    await page.getByRole("heading", { name: "E2E gas" }).waitFor();

    await page.goto("/functions");
    await page.getByRole("link", { name: "E2E gas counter" }).click();
    await page.waitForURL(/\/functions\/[0-9a-f-]{36}$/);
    const runs = page.locator(".np-table-row", { hasText: "STREAM" });
    await reloadUntil(page, async () => (await runs.count()) >= 3);
    expect(await runs.filter({ hasText: "Success" }).count()).toBe(await runs.count());
    await page.getByText('{"blocks":1}').first().waitFor();
    await screenshot(page, "streams-10-function-runs");

    // Run it by hand from the Run tab: the result shows, and the run joins the history.
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await page.getByLabel("Params (JSON)").fill('{ "data": [1, 2, 3], "metadata": {} }');
    await page.getByRole("button", { name: "Run" }).click();
    await page.locator(".np-runner-result").getByText('{"blocks":3}').waitFor();
    await page.getByLabel("Params (JSON)").fill("{ not json");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText(/This is not valid JSON/).waitFor();
    await screenshot(page, "streams-11-function-run");
    await page
      .getByRole("navigation", { name: / sections$/ })
      .getByRole("link", { name: "Overview", exact: true })
      .click();
    // The run from the Run tab joins the history (the stream's runs each returned one block).
    await page.locator(".np-table-row").getByText('{"blocks":3}').waitFor();

    expect(e2e.pageErrors).toEqual([]);
  }, 120_000);
});
