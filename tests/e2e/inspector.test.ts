// The request inspector end to end, under the default egress policy (as `npm start` runs: loopback
// refused, the engine in its child process): a newcomer creates a stream whose URL is a request
// inspector made in one step from the form, and sees the deliveries arrive, signed and verified, at
// 1440 px and at 390 px; then deletes the inspection URL with a confirmation.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { choose, oneLocalChainEnv, reloadUntil, screenshot, settle, signInWithForm, useE2E } from "./harness.ts";

const e2e = useE2E({ env: { ...oneLocalChainEnv("inspector"), NODEPLANE_EGRESS_ALLOW: "" } });

/** Whether the page scrolls sideways (content wider than the window). */
const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);

describe("request inspector, end to end", () => {
  it("a stream to an inspector made from the form delivers; requests show verified at 1440 and 390 px", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInWithForm(page);

    // Nothing set up yet: the stream form offers the inspector first, and makes one in one step.
    await page.goto("/streams/new");
    await settle(page);
    await page.getByLabel("Name", { exact: true }).fill("To the inspector");
    await choose(page, "Network", "Ethereum Mainnet");
    await choose(page, "Dataset", "Block");
    await page.getByLabel("Start block", { exact: true }).fill("1");
    await page.getByLabel("End block", { exact: true }).fill("3");
    await choose(page, "Destination", "Webhook");
    const offer = page.getByRole("button", { name: "Use a request inspector" });
    await offer.waitFor();
    await screenshot(page, "inspector-01-stream-form-offer");
    await offer.click();
    const url = page.getByLabel("URL", { exact: true });
    await expect.poll(() => url.inputValue()).toMatch(/\/inspect\/[0-9a-f]{32}$/);
    await page.getByLabel("Security token", { exact: true }).fill("e2e-inspector-token");
    await page.getByLabel("Retry interval (s)", { exact: true }).fill("0");
    await choose(page, "Start", "Active");
    await screenshot(page, "inspector-02-stream-form-filled");
    await page.getByRole("button", { name: "Create stream" }).click();
    await page.waitForURL(/\/streams\/[0-9a-f-]{36}$/);

    // The inspector's list, then its requests: the deliveries arrive signed and verified.
    await page.goto("/inspector");
    await settle(page);
    await page.getByRole("link", { name: "Inspector 1" }).first().click();
    await page.waitForURL(/\/inspector\/[0-9a-f-]{36}$/);
    const inspectorPath = new URL(page.url()).pathname;
    await settle(page);
    await reloadUntil(page, async () => (await page.locator(".np-table-row", { hasText: "Verified" }).count()) > 0, {
      intervalMs: 1_500,
    });
    expect(await page.getByText("Does not match", { exact: true }).count()).toBe(0);
    await screenshot(page, "inspector-03-requests-1440");

    await page.locator(".np-table-row", { hasText: "Verified" }).first().getByRole("link").first().click();
    await page.waitForURL(/\/requests\/\d+$/);
    const requestPath = new URL(page.url()).pathname;
    await settle(page);
    await page.getByText("x-qn-signature", { exact: true }).waitFor();
    // The body is pretty-printed JSON (collapsed to its first lines): the blocks the stream delivered.
    await expect
      .poll(async () => (await page.locator("[data-widget=json] pre").textContent()) ?? "")
      .toMatch(/^\[\n {2}\{\n {4}"hash": "0x[0-9a-f]{64}"/);
    await screenshot(page, "inspector-04-request-1440");

    // The same pages at 390 px fit the window.
    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    for (const [path, name] of [
      ["/inspector", "inspector-05-list-390"],
      [inspectorPath, "inspector-06-requests-390"],
      [requestPath, "inspector-07-request-390"],
    ] as const) {
      await phone.goto(path);
      await settle(phone);
      await screenshot(phone, name);
      expect(await scrollsSideways(phone), path).toBe(false);
    }
    // The webhook form offers the inspection URL the account has.
    await phone.goto("/webhooks/new");
    await settle(phone);
    await phone.getByLabel("URL", { exact: true }).click();
    await phone.locator(".ant-select-dropdown:visible").getByText("Inspector 1").waitFor();
    await screenshot(phone, "inspector-08-webhook-form-390");

    // Delete, with a confirmation.
    await page.goto("/inspector");
    await settle(page);
    await page.getByRole("button", { name: "Delete" }).first().click();
    const confirm = page.locator(".ant-modal-confirm", { hasText: "Delete this inspection URL?" });
    await confirm.waitFor();
    await screenshot(page, "inspector-09-delete-confirm");
    await confirm.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No inspection URLs yet").waitFor();

    expect(e2e.pageErrors).toEqual([]);
  }, 240_000);
});
