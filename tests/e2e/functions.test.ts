// Functions end to end: a quick function deployed from a template, its code tested and saved as a new
// version from the Code tab, run from the Run tab and by its cURL commands, and its history, logs, metrics
// (runs and GB-seconds) and versions seen in the console.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, settle, useE2E } from "./harness.ts";

// One local chain (a fresh anvil mining a block a second) for ethereum-mainnet, which the block call names.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-functions-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-mainnet"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

async function signIn(page: Page, email: string) {
  await page.goto("/");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: /functions/i })
    .first()
    .waitFor();
}

describe("functions, end to end", () => {
  it("deploys a quick function, tests and runs it, and shows its history, logs and metrics", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 1000 } });
    await signIn(page, "demo@nodeplane.local");

    // Quick function: a template becomes a deployed function in one step.
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /quick function/i })
      .click();
    await page.getByLabel("Template").click();
    await page.locator(".ant-select-dropdown:visible").getByText("Echo user data", { exact: true }).click();
    // The chosen template says what it does before it is deployed.
    await page
      .locator("[data-chosen-description]")
      .getByText(/Returns the user_data it was called with/)
      .waitFor();
    await page.getByLabel("Name", { exact: true }).fill("E2E echo");
    await page.getByRole("button", { name: "Deploy" }).click();
    await page.waitForURL(/\/functions\/[0-9a-f-]{36}$/);
    const functionPath = new URL(page.url()).pathname;
    await page.getByRole("heading", { name: "E2E echo" }).waitFor();
    expect(await page.getByText(`${functionPath}/call`).count()).toBeGreaterThan(0);

    // Code tab: the saved code, tested with user data; nothing is recorded.
    await page.getByRole("link", { name: "Code", exact: true }).click();
    await expect.poll(() => page.locator("textarea").first().inputValue()).toContain("params.user_data");
    await page.getByLabel("User data (JSON)").fill('{ "who": "e2e test" }');
    await page.getByRole("button", { name: "Test", exact: true }).click();
    await expect.poll(() => page.getByText('"who": "e2e test"').count()).toBeGreaterThan(0);
    await screenshot(page, "functions-01-code");
    // Saved where it was tested: a new version, which the runs below run.
    const editor = page.locator("textarea").first();
    // A long line, which the Versions table keeps within its card.
    await editor.fill(
      `// saved from the Code tab; ${"a long line of comment ".repeat(16)}\n${await editor.inputValue()}`,
    );
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.getByText("Saved as a new version").waitFor();

    // Run tab: two recorded runs.
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await page.getByLabel("User data (JSON)").fill('{ "who": "e2e run" }');
    for (let i = 0; i < 2; i++) {
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await expect.poll(() => page.getByText("Success", { exact: true }).count()).toBeGreaterThan(0);
    }

    // Overview: both runs in the history, from the Run tab.
    await page
      .getByRole("navigation", { name: / sections$/ })
      .getByRole("link", { name: "Overview", exact: true })
      .click();
    await expect.poll(() => page.locator(".np-table-row").count()).toBe(2);
    expect(await page.locator(".ant-descriptions").first().textContent()).toMatch(/Version\s*2/);

    // Its cURL commands call this service's address; run as shown, an API key made for functions filled
    // in, each is answered and recorded as a run from the HTTP address (source HTTP).
    const session = (await page.context().cookies()).find((cookie) => cookie.name === "np_session");
    expect(session).toBeDefined();
    const made = await page.context().request.post(`${e2e.service.url}/graphql`, {
      data: {
        query:
          'mutation { createAccessToken(input: { name: "curl", role: ADMIN, applications: [FUNCTIONS_REST] }) { key } }',
      },
    });
    const apiKey = ((await made.json()) as { data: { createAccessToken: { key: string } } }).data.createAccessToken.key;
    const curlFor = async (tab: string) => {
      await page.getByRole("tab", { name: tab }).click();
      return (await page.locator('[data-widget="curl"] pre').filter({ visible: true }).textContent()) ?? "";
    };
    const withUserData = await curlFor("With user data");
    expect(withUserData).toContain(`curl -X POST '${e2e.service.url}${functionPath}/call'`);
    await screenshot(page, "functions-02-curl");
    const answer = (command: string) =>
      JSON.parse(
        execFileSync("sh", ["-c", command.replace("YOUR_API_KEY", apiKey)], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        }),
      ) as { success: boolean; result: { received: unknown } };
    expect(answer(withUserData)).toMatchObject({
      success: true,
      result: { received: { address: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045" } },
    });
    expect(answer(await curlFor("On a block"))).toMatchObject({ success: true, result: { received: {} } });
    await page.reload();
    await settle(page);
    await expect.poll(() => page.locator(".np-table-row").count()).toBe(4);
    expect(await page.locator(".np-table-row").getByText("HTTP", { exact: true }).count()).toBe(2);

    // Logs: the console lines of the runs.
    await page.getByRole("link", { name: "Logs", exact: true }).click();
    await expect.poll(() => page.getByText('called with {"who":"e2e run"}').count()).toBe(2);

    // Metrics: two runs, GB-seconds billed, and the charts drawn.
    await page.getByRole("link", { name: "Metrics", exact: true }).click();
    const totals = page.locator(".ant-descriptions").first();
    await expect.poll(() => totals.getByText("Runs", { exact: true }).count()).toBe(1);
    await expect.poll(async () => (await totals.textContent()) ?? "").toMatch(/Runs\s*4/);
    await expect.poll(async () => (await totals.textContent()) ?? "").toMatch(/Billed \(GB-s\)\s*0\.\d+ GB-s/);
    // Every chart draws its series (ECharts renders SVG).
    await expect.poll(() => page.locator('[data-view="chart"]').count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(6);
    await page.locator('[data-view="chart"] svg path').filter({ visible: true }).first().waitFor();
    await screenshot(page, "functions-03-metrics");
    // One range for the whole screen: the last 31 days by default (what the service counts without one);
    // the last hour, chosen, is kept in the address and still holds the four runs; Back returns.
    const rangeBar = page.locator(".np-screen-toolbar");
    expect(await rangeBar.textContent()).toContain("Last 31 days");
    await rangeBar.getByRole("combobox", { name: "Time range" }).click();
    await page.locator(".ant-select-dropdown:visible").getByText("Last hour", { exact: true }).click();
    await page.waitForURL(/\/metrics\?range=1h$/);
    await expect.poll(async () => (await rangeBar.textContent()) ?? "").toContain("Last hour");
    await expect.poll(async () => (await totals.textContent()) ?? "").toMatch(/Runs\s*4/);
    await page.locator('[data-view="chart"] svg path').filter({ visible: true }).first().waitFor();
    await page.goBack();
    await page.waitForURL(/\/metrics$/);
    await expect.poll(async () => (await rangeBar.textContent()) ?? "").toContain("Last 31 days");

    // Settings: the Versions table keeps the long line of version 2 within its card (it scrolls in its cell).
    await page.getByRole("link", { name: "Settings", exact: true }).click();
    const versions = page.locator('[data-view="list"]').filter({ hasText: "Versions" });
    await expect.poll(() => versions.locator(".np-table-row").count()).toBe(2);
    const fits = await versions
      .locator(".np-table-scroll")
      .evaluate((element) => element.scrollWidth <= element.clientWidth + 1);
    expect(fits).toBe(true);
    await screenshot(page, "functions-04-versions");
    expect(e2e.pageErrors).toEqual([]);
  });
});
