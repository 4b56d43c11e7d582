// The add-on marketplace end to end: find Trace & Debug in the marketplace, install it on an endpoint
// from its page (plan chosen in the form), call its method on the endpoint and see the node's trace,
// see the call in usage, remove it from the endpoint's Add-ons tab with a confirmation, and see the
// method refused again. The screens at 1440 and 390 px.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { screenshot, settle, signInWithForm, useE2E } from "./harness.ts";

const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-addons-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-mainnet"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

/** Picks an option of an antd select found by its form label. */
async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label, { exact: true }).click();
  const dropdown = page.locator(".ant-select-dropdown:visible");
  await dropdown.waitFor();
  await dropdown.locator(".ant-select-item-option").getByText(option, { exact: true }).first().click();
  await dropdown.waitFor({ state: "hidden" });
}

/** A GraphQL call with the page's session, as the console makes it. */
async function gql<T>(page: Page, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await page.request.post("/graphql", { data: { query, variables } });
  const body = (await response.json()) as { data: T; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

/** One JSON-RPC call to the endpoint, as a user's app makes it (fetch, token in the path). */
async function call(page: Page, url: string, method: string, params: unknown[]) {
  const response = await page.request.post(url, { data: { jsonrpc: "2.0", id: 1, method, params } });
  return (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
}

const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);

describe("add-on marketplace, end to end", () => {
  it("find Trace & Debug, install it, its method answers on the endpoint, removed it is refused", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInWithForm(page);
    const { createEndpoint: endpoint } = await gql<{
      createEndpoint: { id: string; httpUrl: string; initialToken: string };
    }>(
      page,
      `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-mainnet", label: "Traced" }) { id httpUrl initialToken } }`,
    );
    const rpcUrl = `${endpoint.httpUrl}/${endpoint.initialToken}`;
    // A block with a transaction is not needed: trace_block answers for any block the node has.
    const refusedBefore = await call(page, rpcUrl, "trace_block", ["0x1"]);
    expect(refusedBefore.error?.code).toBe(-32009);
    expect(refusedBefore.error?.message).toContain("Trace & Debug");

    // The marketplace: search, then the add-on's page.
    await page.goto("/marketplace");
    await settle(page);
    await screenshot(page, "addons-01-marketplace-1440");
    await page.getByPlaceholder("Search add-ons and their methods").fill("trace");
    await page.keyboard.press("Enter");
    await page.getByRole("link", { name: "Trace & Debug" }).first().click();
    await page.waitForURL(/\/marketplace\/trace-debug$/);
    await settle(page);
    await screenshot(page, "addons-02-addon-page-1440");

    // Install with a plan chosen in the form.
    await page.getByRole("button", { name: "Install" }).first().click();
    const dialog = page.locator(".ant-modal", { hasText: "Install on an endpoint" });
    await dialog.waitFor();
    await choose(page, "Endpoint", "Traced");
    await choose(page, "Plan", "Pro");
    await screenshot(page, "addons-03-install-form-1440");
    await dialog.getByRole("button", { name: "Install" }).click();
    await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}\/addons$/);
    await settle(page);
    await page.getByText("debug_traceTransaction").first().waitFor();
    await screenshot(page, "addons-04-endpoint-addons-1440");

    // The method answers at once, as the sample on the page calls it.
    const served = await call(page, rpcUrl, "trace_block", ["0x1"]);
    expect(served.error, JSON.stringify(served)).toBeUndefined();
    expect(Array.isArray(served.result)).toBe(true);

    // The call is in usage, per add-on.
    await expect
      .poll(
        async () =>
          (
            await gql<{ usage: { addonUsages: { addonSlug: string; requests: number }[] } }>(
              page,
              "{ usage(pastDay: true) { addonUsages { addonSlug requests } } }",
            )
          ).usage.addonUsages,
        { timeout: 15_000 },
      )
      .toEqual([{ addonSlug: "trace-debug", requests: 1 }]);

    // The same screens at 390 px fit the window; the dashboard lists the active add-on.
    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    for (const [path, name] of [
      ["/marketplace", "addons-05-marketplace-390"],
      ["/marketplace/trace-debug", "addons-06-addon-page-390"],
      [`/endpoints/${endpoint.id}/addons`, "addons-07-endpoint-addons-390"],
      ["/", "addons-08-dashboard-390"],
    ] as const) {
      await phone.goto(path);
      await settle(phone);
      await screenshot(phone, name);
      expect(await scrollsSideways(phone), path).toBe(false);
    }
    await phone.getByText("Trace & Debug").first().waitFor();

    // Remove it at once, with a reason and a confirmation.
    await page.getByRole("button", { name: "Remove" }).first().click();
    const form = page.locator(".ant-modal", { hasText: "Remove the add-on" });
    await form.waitFor();
    await form.getByLabel("Why are you removing it?").fill("Done debugging");
    await form.getByLabel("Remove at once (else at the period's end)").check();
    await screenshot(page, "addons-09-remove-form-1440");
    await form.getByRole("button", { name: "Remove" }).click();
    const confirm = page.locator(".ant-modal-confirm", { hasText: "Remove this add-on?" });
    if (await confirm.count()) await confirm.getByRole("button", { name: "Remove" }).click();
    await page.getByText("No add-ons on this endpoint").waitFor();
    const refusedAfter = await call(page, rpcUrl, "trace_block", ["0x1"]);
    expect(refusedAfter.error?.code).toBe(-32009);

    expect(e2e.pageErrors).toEqual([]);
  }, 300_000);
});
