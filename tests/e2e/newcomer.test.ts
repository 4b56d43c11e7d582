// A newcomer's first minutes, in Chromium at 1440 px and on a phone (390 px, navigation in a drawer):
// sign up, create an endpoint, copy its URL from the success screen (the clipboard's own text), call it;
// the first IP rule turns the allowlist on and the audit shows it; a webhook to a receiver started here
// shows its delivery history (delivered batches with HTTP status, latency and a payload preview); a
// viewer who opens the create address is told it needs the Admin role, and changes their own name.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, type ExpectStatic, it } from "vitest";
import { DEMO_PASSWORD, failureScreenshot, screenshot, useE2E } from "./harness.ts";

// One local anvil node, for Ethereum Sepolia: the only network this service serves.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-networks-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

const VIEWPORTS = [
  { name: "1440", width: 1440, height: 900 },
  // A phone: below 1200 px the navigation is a drawer opened from the header.
  { name: "390", width: 390, height: 844 },
];

/** A webhook receiver: answers every POST with 200 and keeps the bodies by path (one path per walk). */
let receiver: Server;
let receiverUrl = "";
const received = new Map<string, string[]>();
const receivedAt = (path: string) => {
  if (!received.has(path)) received.set(path, []);
  return received.get(path) as string[];
};
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      receivedAt(req.url ?? "/").push(Buffer.concat(chunks).toString("utf8"));
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const address = receiver.address();
  if (!address || typeof address === "string") throw new Error("no receiver address");
  receiverUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

/** Signed in: the side menu at desktop width, the drawer's button on a phone. */
async function signedIn(page: Page, phone: boolean) {
  if (phone) await page.getByRole("button", { name: "Open navigation" }).waitFor();
  else
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /endpoints/i })
      .first()
      .waitFor();
}

/** Reloads until the test holds (the engine writes delivery history once a second). */
async function reloadUntil(page: Page, test: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await test()) return;
    await page.waitForTimeout(2_000);
    await page.reload();
  }
  const file = await failureScreenshot(page, "newcomer-timed-out");
  throw new Error(`timed out waiting for the page to change (it is in ${file})`);
}

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

/** The walks copying one after the other: the browser has one clipboard for all its pages. */
let clipboardFree: Promise<unknown> = Promise.resolve();

/** Clicks a copy button and returns what the clipboard then holds. */
function copy(expect: ExpectStatic, page: Page, button: ReturnType<Page["locator"]>): Promise<string> {
  const copied = clipboardFree.then(async () => {
    await page.evaluate(() => navigator.clipboard.writeText(""));
    await button.click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).not.toBe("");
    return page.evaluate(() => navigator.clipboard.readText());
  });
  clipboardFree = copied.catch(() => undefined);
  return copied;
}

// The walks are independent (each its own account or session, page and webhook path) and mostly wait
// on blocks and deliveries: run side by side, one's waits overlap another's. Each asserts with its own
// test's `expect`, as concurrent tests must.
describe.concurrent.each(VIEWPORTS)("a newcomer's walk at $name px", (viewport) => {
  const phone = viewport.width < 1200;
  const hookPath = `/hooks/blocks-${viewport.name}`;
  const shot = (page: Page, name: string) => screenshot(page, `newcomer-${viewport.name}-${name}`);

  it("signs up, creates an endpoint, copies its URL and calls it; the first IP rule turns the allowlist on; a webhook shows its deliveries", async ({
    expect,
  }) => {
    const page = await e2e.newPage({ viewport });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: e2e.service.url });

    await page.goto("/sign-up");
    await page.getByLabel("Email").fill(`newcomer-${Date.now()}@example.test`);
    await page.getByLabel("Password").fill("a-newcomer-password");
    await page.getByLabel("Full name").fill("Nina Newcomer");
    await page.getByRole("button", { name: /create account/i }).click();
    await signedIn(page, phone);

    await page.goto("/endpoints/new");
    await choose(page, "Chain", "Ethereum");
    await page.getByLabel("Network").click();
    const options = page.locator(".ant-select-dropdown:visible .ant-select-item-option");
    // Networks without a chain node here are shown, marked, and cannot be chosen.
    const mainnet = options.filter({ hasText: "Ethereum Mainnet" });
    await expect.poll(() => mainnet.textContent()).toContain("Not served here");
    expect(await mainnet.getAttribute("aria-disabled")).toBe("true");
    await shot(page, "01-network-picker");
    await options.filter({ hasText: "Ethereum Sepolia" }).click();
    await page.getByLabel("Label").fill("First endpoint");
    await page.getByRole("button", { name: /create endpoint/i }).click();

    const result = page.locator('[data-view="form-result"]');
    await result.waitFor();
    await shot(page, "02-created");
    const httpUrl = await copy(expect, page, result.locator('[data-url="http"] .ant-typography-copy'));
    expect(httpUrl).toMatch(/\/rpc\/[0-9a-f]{24}\/[0-9a-f]{64}$/);
    const wssUrl = await copy(expect, page, result.locator('[data-url="wss"] .ant-typography-copy'));
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
    await shot(page, "03-security");

    // A masked token has no copy button.
    const tokens = page.locator('[data-view="list"]').filter({ has: page.getByRole("heading", { name: "Tokens" }) });
    await tokens.getByText(/•{8}/).first().waitFor();
    expect(await tokens.getByRole("button", { name: /copy/i }).count()).toBe(0);

    // A webhook to the receiver, started at once; its Deliveries tab shows each delivered batch.
    await page.goto("/webhooks/new");
    const name = `Blocks ${viewport.name}`;
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Network", { exact: true }).click();
    await page.locator(".ant-select-dropdown:visible").getByText("Ethereum Sepolia", { exact: true }).click();
    await page.getByLabel("URL", { exact: true }).fill(`${receiverUrl}${hookPath}`);
    await page.getByLabel("Start", { exact: true }).click();
    await page.locator(".ant-select-dropdown:visible").getByText("Active", { exact: true }).click();
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.waitForURL(/\/webhooks\/[0-9a-f-]{36}$/);
    await expect.poll(() => receivedAt(hookPath).length, { timeout: 30_000 }).toBeGreaterThan(0);
    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    await page.waitForURL(/\/deliveries$/);
    // A reload under load takes a while: each look waits for the list's rows (cards on a phone) or its empty state.
    const list = page.locator('[data-view="list"]');
    const delivered = list.locator("tr.np-table-row").filter({ hasText: "Delivered" });
    await reloadUntil(page, async () => {
      await list.locator(".np-table tbody tr, .ant-empty").first().waitFor({ timeout: 30_000 });
      return (await delivered.count()) > 0;
    });
    const row = delivered.first();
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells, cells.join(" | ")).toContain("200");
    expect(cells.some((cell) => /^\d+(\.\d+)? ?ms$/.test(cell.trim()))).toBe(true);
    // The payload preview is the start of what the receiver got.
    const preview = ((await row.locator("code").last().textContent()) ?? "").replace(/…$/, "");
    expect(preview.length).toBeGreaterThan(10);
    expect(receivedAt(hookPath).some((body) => body.startsWith(preview))).toBe(true);
    await shot(page, "04-webhook-deliveries");
    // The row's far side (answer, latency, size, payload) is a sideways scroll away, on a phone most of it.
    await row.locator("code").last().scrollIntoViewIfNeeded();
    await shot(page, "04b-webhook-delivery-preview");
    expect(e2e.pageErrors).toEqual([]);
  }, 240_000);

  it("tells a viewer a create address needs the Admin role, and lets them change their own name", async ({
    expect,
  }) => {
    const page = await e2e.newPage({ viewport });
    await page.goto("/");
    await page.getByLabel("Email").fill("viewer@nodeplane.local");
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();
    await signedIn(page, phone);

    await page.goto("/endpoints/new");
    await page.getByText("This page needs the Admin role").waitFor();
    expect(await page.getByText(/NOT_FOUND|not found/i).count()).toBe(0);
    await shot(page, "05-viewer-create");

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
    await shot(page, "06-viewer-account");
    expect(e2e.pageErrors).toEqual([]);
  });
});
