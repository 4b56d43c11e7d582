/**
 * Accessibility: axe-core over every screen of the registry, for an owner and for a viewer, at desktop
 * and phone widths; and the keyboard paths (skip link, focus on the page heading after navigation,
 * dialogs that take focus and give it back).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  axeViolations,
  endDemoBillingPeriod,
  navigateInApp,
  screenshot,
  screenshotsWanted,
  settle,
  signInWithForm,
  useE2E,
  type Violation,
} from "./harness.ts";
import { repoRoot } from "./harness-build.ts";

// One local chain node, so a stream and a webhook can be created.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-a11y-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-mainnet"], blockTimeSeconds: 1 } }));
// The billing clock ticks every second and crypto charges use the one node: the seed pays an invoice's charge page.
const e2e = useE2E({
  env: {
    NODEPLANE_LOCAL_CHAIN: "1",
    NODEPLANE_NETWORKS_CONFIG: networksFile,
    NODEPLANE_BILLING_CLOCK_MS: "1000",
    NODEPLANE_CRYPTO_NETWORK: "ethereum-mainnet",
  },
});

async function signInAs(page: Page, email: string) {
  await signInWithForm(page, email);
  await page.locator("h1").first().waitFor();
  // The click left the pointer where the button was: whatever a screen draws there would be checked in
  // its hover colours, not its own.
  await page.mouse.move(0, 0);
}

/** A GraphQL call with the page's session; fails the test on an error. */
async function gql<T>(page: Page, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await page.evaluate(
    async ({ query, variables }) => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: unknown }[] };
    },
    { query, variables },
  );
  if (answer.errors?.length) throw new Error(`${query}: ${JSON.stringify(answer.errors)}`);
  return answer.data as T;
}

/**
 * One record of each kind the routes name, made as the owner: the demo endpoint, a call it refused
 * (an error log), a function, a stream, a webhook, a list, an address book, a value, an inspection URL
 * with a request it received, an add-on install, an API key and a crypto charge for the period's invoice; the marketplace's slug is the Trace & Debug add-on's. Returns the value
 * of each route parameter.
 */
async function seedRecords(page: Page): Promise<Record<string, string>> {
  const { endpoints } = await gql<{ endpoints: { edges: { node: { id: string; exId: string; httpUrl: string } }[] } }>(
    page,
    "{ endpoints(first: 1) { edges { node { id exId httpUrl } } } }",
  );
  const endpoint = endpoints.edges[0].node;
  // Without a token the call is refused and logged.
  await fetch(endpoint.httpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  });
  // Nothing listens there: the webhook and stream are never activated.
  const url = "http://127.0.0.1:9/hook";
  const { createFunction } = await gql<{ createFunction: { id: string } }>(
    page,
    "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
    { input: { name: "Echo", code: "function main(params) { return params.data; }" } },
  );
  const { createStream } = await gql<{ createStream: { id: string } }>(
    page,
    "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
    {
      input: {
        name: "Blocks",
        network: "ethereum-mainnet",
        dataset: "BLOCK",
        destination: "WEBHOOK",
        destinationAttributes: { url, securityToken: "a11y-secret", maxRetry: 1, retryIntervalSec: 0 },
        startRange: 1,
        endRange: 2,
      },
    },
  );
  const { createWebhook } = await gql<{ createWebhook: { id: string } }>(
    page,
    "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
    { input: { name: "Transfers", network: "ethereum-mainnet", url } },
  );
  // The key-value screens name a list, an address book and a value by key.
  await gql(page, 'mutation { createList(input: { key: "a11y-list", items: ["one", "two"] }) { success } }');
  await gql(
    page,
    'mutation { createAddressBook(input: { key: "a11y-book", items: ["0x00000000219ab540356cbb839cbe05303d7705fa"] }) { success } }',
  );
  await gql(page, 'mutation { createValue(input: { key: "a11y-value", value: "42" }) { key } }');
  // An inspection URL that has received one request.
  const { createInspectionUrl } = await gql<{ createInspectionUrl: { id: string; url: string } }>(
    page,
    'mutation { createInspectionUrl(input: { name: "A11y" }) { id url } }',
  );
  await fetch(createInspectionUrl.url, { method: "POST", body: '{"hello":"inspector"}' });
  const { inspectedRequests } = await gql<{ inspectedRequests: { id: string }[] }>(
    page,
    "query($id: ID!) { inspectedRequests(id: $id) { id } }",
    { id: createInspectionUrl.id },
  );
  let requestId: string | undefined;
  await expect
    .poll(
      async () => {
        const { errorLogs } = await gql<{ errorLogs: { logs: { requestId: string }[] } }>(
          page,
          "query($e: String!) { errorLogs(endpointExId: $e, limit: 1) { logs { requestId } } }",
          { e: endpoint.exId },
        );
        requestId = errorLogs.logs[0]?.requestId;
        return requestId;
      },
      { timeout: 15_000 },
    )
    .toBeTruthy();
  // An add-on installed on the endpoint and an API key, so their lists are checked with a row.
  await gql(
    page,
    'mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "trace-debug-starter" }) { id } }',
    {
      e: endpoint.id,
    },
  );
  await gql(
    page,
    'mutation { createAccessToken(input: { name: "a11y", role: VIEWER, applications: [CONSOLE_REST] }) { key } }',
  );
  // The period closed into an open invoice, and a crypto charge for it (the checkout page's record).
  await endDemoBillingPeriod(e2e.service);
  let invoiceId: string | undefined;
  await expect
    .poll(
      async () => {
        const { invoices } = await gql<{ invoices: { edges: { node: { id: string; status: string } }[] } }>(
          page,
          "{ invoices(first: 5) { edges { node { id status } } } }",
        );
        invoiceId = invoices.edges.find((edge) => edge.node.status === "open")?.node.id;
        return invoiceId;
      },
      { timeout: 30_000 },
    )
    .toBeTruthy();
  const { createCoinbaseCharge } = await gql<{ createCoinbaseCharge: { code: string } }>(
    page,
    "mutation($i: ID!) { createCoinbaseCharge(input: { invoiceId: $i }) { code } }",
    { i: invoiceId },
  );
  return {
    chargeCode: createCoinbaseCharge.code,
    slug: "trace-debug",
    endpointId: endpoint.id,
    requestId: requestId as string,
    functionId: createFunction.id,
    streamId: createStream.id,
    webhookId: createWebhook.id,
    listKey: "a11y-list",
    addressBookKey: "a11y-book",
    valueKey: "a11y-value",
    inspectionUrlId: createInspectionUrl.id,
    inspectedRequestId: inspectedRequests[0].id,
  };
}

/**
 * The visible table cells whose text is cut with no way to read it: a cell, or a box inside it, whose
 * content is wider than the box (or clamped to fewer lines than it has), with no `title` on it or
 * around it inside the cell. A box that scrolls and takes focus is readable by keyboard; text only for
 * screen readers (a 1 px box) is not shown at all.
 */
function cutCells(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    for (const cell of document.querySelectorAll<HTMLElement>("td")) {
      if (!cell.checkVisibility()) continue;
      for (const box of [cell, ...cell.querySelectorAll<HTMLElement>("*")]) {
        if (box.clientWidth <= 1 && box.clientHeight <= 1) continue;
        const style = getComputedStyle(box);
        const wider = box.scrollWidth > box.clientWidth + 1;
        const clamped = style.webkitLineClamp !== "none" && box.scrollHeight > box.clientHeight + 1;
        if (!wider && !clamped) continue;
        if (/auto|scroll/.test(style.overflowX) && box.tabIndex >= 0) continue;
        const titled = box.closest("[title]");
        if (titled && cell.contains(titled)) continue;
        found.push(`${(box.textContent ?? "").slice(0, 40)} (${box.scrollWidth} px in ${box.clientWidth} px)`);
        break;
      }
    }
    return found;
  });
}

async function registryRoutes(page: Page, params: Record<string, string>): Promise<string[]> {
  const { registry } = await gql<{ registry: { screens: { route: string; slot?: string }[] } }>(
    page,
    "{ registry { screens } }",
  );
  // A slotted screen is no page: its views (the account's banners) are part of every page visited here.
  return registry.screens
    .filter(({ slot }) => !slot)
    .map(({ route }) =>
      route.replace(/:([A-Za-z]+)/g, (_, name: string) => {
        if (!params[name]) throw new Error(`no record for the route parameter ${name} of ${route}`);
        return encodeURIComponent(params[name]);
      }),
    );
}

describe("accessibility", () => {
  let params: Record<string, string> = {};
  // Made once, by whichever sweep starts first, in the owner's own page; the others wait for it.
  let seeded: Promise<Record<string, string>> | undefined;
  const seedOnce = () => {
    seeded ??= (async () => {
      const owner = await e2e.newPage();
      await signInAs(owner, "demo@nodeplane.local");
      params = await seedRecords(owner);
      return params;
    })();
    return seeded;
  };

  // The four sweeps are independent (each its own page and session): run side by side, the browser
  // renders or axe checks one page while the service answers another's queries.
  for (const [role, email] of [
    ["owner", "demo@nodeplane.local"],
    ["viewer", "viewer@nodeplane.local"],
  ] as const)
    for (const width of [1440, 390])
      it.concurrent(`finds no axe violation of any impact, overflow or unreadable cut cell on any screen for the ${role} at ${width} px`, async () => {
        const page = await e2e.newPage({ viewport: { width, height: 900 } });
        await signInAs(page, email);
        const routes = await registryRoutes(page, await seedOnce());
        expect(routes.length).toBeGreaterThan(role === "owner" ? 30 : 25);
        const violations: Violation[] = [];
        const overflowing: string[] = [];
        const cut: string[] = [];
        for (const route of routes) {
          await navigateInApp(page, route);
          violations.push(...(await axeViolations(page, route)));
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          if (overflow > 0) overflowing.push(`${route} (${overflow} px)`);
          cut.push(...(await cutCells(page)).map((cell) => `${route}: ${cell}`));
          // A list fits its card: no table scrolls sideways, at either width.
          const tableOverflow = await page.evaluate(() =>
            Math.max(
              0,
              ...[...document.querySelectorAll(".np-table-scroll")].map((box) => box.scrollWidth - box.clientWidth),
            ),
          );
          if (tableOverflow > 1) overflowing.push(`${route}: a table (${tableOverflow} px)`);
          // The owner's lists, to be looked at (test-results/screenshots, with E2E_SCREENSHOTS=1).
          if (screenshotsWanted && role === "owner" && (await page.locator("td").count()))
            await screenshot(
              page,
              `a11y-${width}-${await page.locator("[data-screen]").first().getAttribute("data-screen")}`,
            );
        }
        await screenshot(page, `a11y-${role}-${width}-last-screen`);
        mkdirSync(join(repoRoot, "test-results"), { recursive: true });
        writeFileSync(
          join(repoRoot, "test-results", `a11y-${role}-${width}.json`),
          `${JSON.stringify({ violations, overflowing, cut }, null, 2)}\n`,
        );
        expect(violations).toEqual([]);
        expect(overflowing).toEqual([]);
        expect(cut).toEqual([]);
      }, 900_000);

  it("offers a skip link, moves focus to the heading after navigation and gives focus back from dialogs", async () => {
    const page = await e2e.newPage();
    await signInAs(page, "demo@nodeplane.local");
    await page.goto("/endpoints");
    await settle(page);

    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    await expect.poll(() => skip.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("main");

    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /webhooks/i })
      .click();
    await page.waitForURL(/\/webhooks$/);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.tagName + (document.activeElement?.textContent ?? "")))
      .toBe("H1Webhooks");

    await page.goto(`/endpoints/${params.endpointId}`);
    await settle(page);
    const rename = page.getByRole("button", { name: "Rename" });
    await rename.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.id ?? ""))
      .toMatch(/label$/);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => rename.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(e2e.pageErrors).toEqual([]);
  });

  it("says in text why a viewer's actions are disabled", async () => {
    const page = await e2e.newPage();
    await signInAs(page, "viewer@nodeplane.local");
    await page.goto(`/endpoints/${params.endpointId}`);
    await settle(page);
    const rename = page.getByRole("button", { name: "Rename" });
    expect(await rename.isDisabled()).toBe(true);
    const describedBy = await rename.getAttribute("aria-describedby");
    expect(describedBy).toBeTruthy();
    const reason = await page.locator(`[id="${describedBy}"]`).textContent();
    expect(reason).toMatch(/admin/i);
  });
});
