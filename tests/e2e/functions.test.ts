// Functions end to end: a quick function deployed from a template, its code tested and saved as a new
// version from the Code tab, run from the Run tab, and its history, logs and metrics (runs and GB-seconds) seen in the console.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, useE2E } from "./harness.ts";

const e2e = useE2E();

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
    await editor.fill(`// saved from the Code tab\n${await editor.inputValue()}`);
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

    // Logs: the console lines of the runs.
    await page.getByRole("link", { name: "Logs", exact: true }).click();
    await expect.poll(() => page.getByText('called with {"who":"e2e run"}').count()).toBe(2);

    // Metrics: two runs, GB-seconds billed, and the charts drawn.
    await page.getByRole("link", { name: "Metrics", exact: true }).click();
    const totals = page.locator(".ant-descriptions").first();
    await expect.poll(() => totals.getByText("Runs", { exact: true }).count()).toBe(1);
    await expect.poll(async () => (await totals.textContent()) ?? "").toMatch(/Runs\s*2/);
    await expect.poll(async () => (await totals.textContent()) ?? "").toMatch(/Billed \(GB-s\)\s*0\.\d+ GB-s/);
    // Every chart draws its series (ECharts renders SVG).
    await expect.poll(() => page.locator('[data-view="chart"]').count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(6);
    await page.locator('[data-view="chart"] svg path').filter({ visible: true }).first().waitFor();
    await screenshot(page, "functions-02-metrics");
    expect(e2e.pageErrors).toEqual([]);
  });
});
