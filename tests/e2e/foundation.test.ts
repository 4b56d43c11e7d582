import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, useE2E } from "./harness.ts";

// One local anvil node, for Ethereum Sepolia: the create form offers only networks the service serves.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-networks-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

async function signInAs(page: Page, email: string) {
  await page.goto("/");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: /endpoints/i })
    .first()
    .waitFor();
}

/** Picks an option of an antd select found by its form label. */
async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label).click();
  await page.locator(".ant-select-dropdown:visible").getByText(option, { exact: true }).click();
}

const mutatingActions =
  /^(create endpoint|rename|pause|resume|archive|add tag|remove tag|change role|save|update profile|change password)$/i;

/** Every visible button that would change something is disabled. */
async function expectNoEnabledMutation(page: Page) {
  const buttons = page.getByRole("button");
  const count = await buttons.count();
  const enabled: string[] = [];
  for (let i = 0; i < count; i++) {
    const button = buttons.nth(i);
    if (!(await button.isVisible())) continue;
    const name = ((await button.getAttribute("aria-label")) ?? (await button.innerText())).trim();
    if (mutatingActions.test(name) && (await button.isEnabled())) enabled.push(name);
  }
  expect(enabled).toEqual([]);
}

describe("the console, end to end", () => {
  it("lets the owner create, find, relabel, pause and archive an endpoint", async () => {
    const page = await e2e.newPage();
    await page.goto("/");
    // The sign-in form is a page loaded when first shown: the picture waits for it.
    await page.getByLabel("Email").waitFor();
    await screenshot(page, "foundation-01-sign-in");
    await signInAs(page, "demo@nodeplane.local");

    await page.goto("/endpoints");
    await page.getByText("Wallet backend").waitFor();
    await screenshot(page, "foundation-02-endpoints");

    await page
      .getByRole("button", { name: /create endpoint/i })
      .first()
      .click();
    await page.waitForURL(/\/endpoints\/new/);
    await choose(page, "Chain", "Ethereum");
    await choose(page, "Network", "Ethereum Sepolia");
    await page.getByLabel("Label").fill("E2E checkout");
    await screenshot(page, "foundation-03-create");
    await page.getByRole("button", { name: /create endpoint/i }).click();
    await page.getByRole("button", { name: /go to the endpoint/i }).click();

    await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}$/);
    await page.getByRole("heading", { name: "E2E checkout" }).waitFor();
    await expect.poll(() => page.getByText(/\/rpc\/[0-9a-f]{24}/).count()).toBeGreaterThan(0);

    await page.getByRole("button", { name: /add tag/i }).click();
    const tagDialog = page.getByRole("dialog");
    await tagDialog.getByLabel("Tag").fill("e2e-tag");
    await tagDialog
      .getByRole("button", { name: /add tag|save|ok/i })
      .last()
      .click();
    await page.getByText("e2e-tag").first().waitFor();

    await page.getByRole("button", { name: /rename/i }).click();
    const renameDialog = page.getByRole("dialog");
    await renameDialog.getByLabel("Label").fill("E2E renamed");
    await renameDialog
      .getByRole("button", { name: /rename|save|ok/i })
      .last()
      .click();
    await page.getByRole("heading", { name: "E2E renamed" }).waitFor();

    await page.getByRole("button", { name: /pause/i }).click();
    await page.getByRole("button", { name: /resume/i }).waitFor();
    await expect.poll(() => page.getByText("Paused", { exact: true }).count()).toBeGreaterThan(0);
    await screenshot(page, "foundation-04-detail-paused");

    await page.goto("/endpoints");
    await page.getByPlaceholder(/search/i).fill("renamed");
    await page.getByPlaceholder(/search/i).press("Enter");
    await expect.poll(() => page.getByRole("row").filter({ hasText: "E2E renamed" }).count()).toBe(1);
    await expect.poll(() => page.getByRole("row").filter({ hasText: "Wallet backend" }).count()).toBe(0);
    expect(page.url()).toMatch(/search=renamed/);

    await page.goto("/endpoints");
    await choose(page, "Tags", "e2e-tag");
    await expect.poll(() => page.getByRole("row").filter({ hasText: "E2E renamed" }).count()).toBe(1);
    await expect.poll(() => page.getByRole("row").filter({ hasText: "Indexer" }).count()).toBe(0);
    await screenshot(page, "foundation-05-tag-filter");

    await page.getByRole("row").filter({ hasText: "E2E renamed" }).getByRole("link", { name: "E2E renamed" }).click();
    await page.getByRole("heading", { name: "E2E renamed" }).waitFor();
    await page.getByRole("button", { name: /archive/i }).click();
    const confirm = page.getByRole("dialog", { name: /archive this endpoint/i });
    await confirm.waitFor();
    await confirm.getByRole("button", { name: /^archive$/i }).click();
    await expect.poll(() => page.getByText("Archived", { exact: true }).count()).toBeGreaterThan(0);
    await screenshot(page, "foundation-06-archived");

    await page.goto("/endpoints");
    await page.getByText("Wallet backend").waitFor();
    expect(await page.getByText("E2E renamed").count()).toBe(0);
    expect(e2e.pageErrors).toEqual([]);
  });

  it("shows a viewer no enabled action that changes anything", async () => {
    const page = await e2e.newPage();
    await signInAs(page, "viewer@nodeplane.local");

    await page.goto("/endpoints");
    await page.getByText("Wallet backend").waitFor();
    await expectNoEnabledMutation(page);
    await screenshot(page, "foundation-07-viewer-endpoints");

    await page.getByRole("link", { name: "Wallet backend" }).click();
    await page.getByRole("heading", { name: "Wallet backend" }).waitFor();
    await expectNoEnabledMutation(page);
    await screenshot(page, "foundation-08-viewer-detail");

    await page.goto("/account/team");
    await page.getByText("viewer@nodeplane.local").first().waitFor();
    await expectNoEnabledMutation(page);
    await screenshot(page, "foundation-09-viewer-team");
    expect(e2e.pageErrors).toEqual([]);
  });
});
