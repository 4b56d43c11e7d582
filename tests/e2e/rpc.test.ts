import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, settle, useE2E } from "./harness.ts";

// One local anvil node, for Ethereum Sepolia, started by the service itself.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-networks-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

async function signIn(page: Page) {
  await page.goto("/");
  await page.getByLabel("Email").fill("demo@nodeplane.local");
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: /endpoints/i })
    .first()
    .waitFor();
}

async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label).click();
  await page.locator(".ant-select-dropdown:visible").getByText(option, { exact: true }).click();
}

async function rpc(url: string, method = "eth_chainId") {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
  });
  return { status: response.status, body: (await response.json()) as { result?: string; error?: { message: string } } };
}

describe("an RPC endpoint, end to end", () => {
  it("answers curl through a token, refuses outside its IP rule, logs the refusal and counts usage", async () => {
    const page = await e2e.newPage();
    await signIn(page);

    await page.goto("/endpoints/new");
    await choose(page, "Chain", "Ethereum");
    await choose(page, "Network", "Ethereum Sepolia");
    await page.getByLabel("Label").fill("E2E RPC");
    await page.getByRole("button", { name: /create endpoint/i }).click();
    await page.getByRole("button", { name: /go to the endpoint/i }).click();
    await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}$/);
    const endpointPath = new URL(page.url()).pathname;
    const httpUrl = (
      await page
        .getByText(/\/rpc\/[0-9a-f]{24}/)
        .first()
        .innerText()
    ).trim();

    // Token authentication is on from the start: without a token the call is refused.
    expect((await rpc(httpUrl)).status).toBe(401);

    await page.goto(`${endpointPath}/security`);
    await page.getByRole("button", { name: /create token/i }).click();
    const secret = page.locator('[data-widget="secret-once"]');
    const token = /[0-9a-f]{64}/.exec(await secret.innerText())?.[0] as string;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    await screenshot(page, "rpc-01-token-created");
    await page.getByRole("button", { name: /i have copied it/i }).click();

    await expect.poll(async () => (await rpc(`${httpUrl}/${token}`)).status).toBe(200);
    expect((await rpc(`${httpUrl}/${token}`)).body.result).toBe("0xaa36a7");
    expect((await rpc(`${httpUrl}/${token}`, "eth_blockNumber")).body.result).toMatch(/^0x[0-9a-f]+$/);

    // An IP rule that does not include this machine: the call is refused once the allowlist is on.
    await page.getByRole("button", { name: /add ip rule/i }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox").first().fill("203.0.113.0/24");
    await dialog
      .getByRole("button", { name: /add|save|ok/i })
      .last()
      .click();
    await page.getByText("203.0.113.0/24").first().waitFor();
    // The first rule turned the allowlist on.
    await page.getByRole("row").filter({ hasText: "IP allowlist" }).getByRole("button", { name: "Turn off" }).waitFor();
    await screenshot(page, "rpc-02-ip-rule");
    await expect.poll(async () => (await rpc(`${httpUrl}/${token}`)).status).toBe(403);

    await page.goto(`${endpointPath}/error-logs`);
    await expect
      .poll(
        async () => {
          await page.reload();
          // The screen's code and its data load after the reload: count rows once the page is quiet.
          await page.waitForLoadState("networkidle");
          await settle(page);
          return page.getByRole("row").filter({ hasText: "403" }).count();
        },
        { timeout: 20_000 },
      )
      .toBeGreaterThan(0);
    await screenshot(page, "rpc-03-error-logs");

    await page.goto("/usage");
    await expect
      .poll(
        async () => {
          await page.reload();
          // The screen's code and its data load after the reload: count rows once the page is quiet.
          await page.waitForLoadState("networkidle");
          await settle(page);
          return page.getByRole("row").filter({ hasText: "eth_blockNumber" }).count();
        },
        { timeout: 20_000 },
      )
      .toBeGreaterThan(0);
    // The over-time chart draws the calls just made (ECharts renders SVG).
    await page.locator('[data-view="chart"] svg path').filter({ visible: true }).first().waitFor();
    await screenshot(page, "rpc-04-usage");
    expect(e2e.pageErrors).toEqual([]);
  });
});
