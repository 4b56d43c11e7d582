// A newcomer's first minutes, in Chromium at 1440 px: sign up, create an endpoint, copy its URL from
// the success screen (the clipboard's own text), call it; the first IP rule turns the allowlist on and
// the audit shows it; a viewer who opens the create address is told it needs the Admin role, and
// changes their own name.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, useE2E } from "./harness.ts";

// One local anvil node, for Ethereum Sepolia: the only network this service serves.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-networks-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

const WIDE = { width: 1440, height: 900 };

async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label).click();
  await page.locator(".ant-select-dropdown:visible").getByText(option, { exact: true }).click();
}

async function chainId(url: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  return { status: response.status, body: (await response.json()) as { result?: string } };
}

/** Clicks a copy button and returns what the clipboard then holds. */
async function copy(page: Page, button: ReturnType<Page["locator"]>): Promise<string> {
  await page.evaluate(() => navigator.clipboard.writeText(""));
  await button.click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).not.toBe("");
  return page.evaluate(() => navigator.clipboard.readText());
}

describe("a newcomer's walk", () => {
  it("signs up, creates an endpoint, copies its URL and calls it; the first IP rule turns the allowlist on", async () => {
    const page = await e2e.newPage({ viewport: WIDE });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: e2e.service.url });

    await page.goto("/sign-up");
    await page.getByLabel("Email").fill(`newcomer-${Date.now()}@example.test`);
    await page.getByLabel("Password").fill("a-newcomer-password");
    await page.getByLabel("Full name").fill("Nina Newcomer");
    await page.getByRole("button", { name: /create account/i }).click();
    await page
      .getByRole("menuitem", { name: /endpoints/i })
      .first()
      .waitFor();

    await page.goto("/endpoints/new");
    await choose(page, "Chain", "Ethereum");
    await page.getByLabel("Network").click();
    const options = page.locator(".ant-select-dropdown:visible .ant-select-item-option");
    // Networks without a chain node here are shown, marked, and cannot be chosen.
    const mainnet = options.filter({ hasText: "Ethereum Mainnet" });
    await expect.poll(() => mainnet.textContent()).toContain("Not served here");
    expect(await mainnet.getAttribute("aria-disabled")).toBe("true");
    await screenshot(page, "newcomer-01-network-picker");
    await options.filter({ hasText: "Ethereum Sepolia" }).click();
    await page.getByLabel("Label").fill("First endpoint");
    await page.getByRole("button", { name: /create endpoint/i }).click();

    const result = page.locator('[data-view="form-result"]');
    await result.waitFor();
    await screenshot(page, "newcomer-02-created");
    const httpUrl = await copy(page, result.locator('[data-url="http"] .ant-typography-copy'));
    expect(httpUrl).toMatch(/\/rpc\/[0-9a-f]{24}\/[0-9a-f]{64}$/);
    const wssUrl = await copy(page, result.locator('[data-url="wss"] .ant-typography-copy'));
    expect(wssUrl).toBe(httpUrl.replace(/^http/, "ws"));
    // Every sample carries the same URL, ready to run.
    for (const tab of ["viem", "ethers", "web3.py"]) {
      await result.getByRole("tab", { name: tab }).click();
      await expect.poll(() => result.getByRole("tabpanel").locator("pre").textContent()).toContain(httpUrl);
    }
    await result.getByRole("tab", { name: "WebSocket" }).click();
    await expect.poll(() => result.getByRole("tabpanel").locator("pre").textContent()).toContain(wssUrl);

    const answer = await chainId(httpUrl);
    expect(answer).toEqual({ status: 200, body: { jsonrpc: "2.0", id: 1, result: "0xaa36a7" } });

    // Shown once: the endpoint's own page has a placeholder where the token was.
    await page.getByRole("button", { name: /go to the endpoint/i }).click();
    await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}$/);
    const token = httpUrl.split("/").pop() as string;
    await page.getByText("YOUR_TOKEN").first().waitFor();
    expect(await page.content()).not.toContain(token);
    const endpointPath = new URL(page.url()).pathname;

    // The first IP rule turns the allowlist on: this machine is not in the range, so the call is refused.
    await page.goto(`${endpointPath}/security`);
    await page.getByRole("button", { name: /add ip rule/i }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox").first().fill("203.0.113.0/24");
    await dialog.getByRole("button", { name: /add ip rule/i }).click();
    await page.getByRole("row").filter({ hasText: "IP allowlist" }).getByRole("button", { name: "Turn off" }).waitFor();
    expect((await chainId(httpUrl)).status).toBe(403);
    const audit = page.locator('[data-view="list"]').filter({ has: page.getByRole("heading", { name: "Audit" }) });
    await audit.getByRole("row").filter({ hasText: "Turned on" }).filter({ hasText: "IP allowlist" }).waitFor();
    await audit.getByRole("row").filter({ hasText: "203.0.113.0/24" }).waitFor();
    await screenshot(page, "newcomer-03-security");

    // A masked token has no copy button.
    const tokens = page.locator('[data-view="list"]').filter({ has: page.getByRole("heading", { name: "Tokens" }) });
    await tokens.getByText(/•{8}/).first().waitFor();
    expect(await tokens.locator(".ant-typography-copy").count()).toBe(0);
    expect(e2e.pageErrors).toEqual([]);
  });

  it("tells a viewer a create address needs the Admin role, and lets them change their own name", async () => {
    const page = await e2e.newPage({ viewport: WIDE });
    await page.goto("/");
    await page.getByLabel("Email").fill("viewer@nodeplane.local");
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page
      .getByRole("menuitem", { name: /endpoints/i })
      .first()
      .waitFor();

    await page.goto("/endpoints/new");
    await page.getByText("This page needs the Admin role").waitFor();
    expect(await page.getByText(/NOT_FOUND|not found/i).count()).toBe(0);
    await screenshot(page, "newcomer-04-viewer-create");

    await page.goto("/account");
    const profile = page.locator('[data-view="form"]').filter({ hasText: "Your profile" });
    await profile.getByLabel("Full name").fill("Vera Viewer");
    await profile.getByRole("button", { name: "Save profile" }).click();
    await page.getByText("Profile saved").waitFor();
    await page.reload();
    await expect.poll(() => profile.getByLabel("Full name").inputValue()).toBe("Vera Viewer");
    // Account-wide settings stay an admin's.
    const settings = page.locator('[data-view="form"]').filter({ hasText: "Account settings" });
    expect(await settings.getByRole("button", { name: "Save settings" }).isDisabled()).toBe(true);
    await screenshot(page, "newcomer-05-viewer-account");
    expect(e2e.pageErrors).toEqual([]);
  });
});
