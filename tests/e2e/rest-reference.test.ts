// The REST reference end to end: the owner has a key, picks it on the REST API page and pastes its value,
// calls the API from the page ("try it"), revokes the key, and the page's next call is refused. Looked at,
// and fits, at 1440 and 390 px.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { choose, screenshot, settle, signInWithForm, useE2E } from "./harness.ts";

const e2e = useE2E();

/** A GraphQL call as the signed-in page makes it (its session cookie). */
const gqlFromPage = (page: Page, query: string, variables: Record<string, unknown> = {}) =>
  page.evaluate(
    async ([q, v]) => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: q, variables: v }),
      });
      return (await response.json()) as { data: Record<string, { key?: string; accessToken?: { id: string } }> };
    },
    [query, variables] as const,
  );

const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);

describe("the REST reference, end to end", () => {
  it("calls the API with a picked and pasted key until the key is revoked", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 900 } });
    await signInWithForm(page);
    const made = await gqlFromPage(
      page,
      "mutation($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { key accessToken { id } } }",
      { input: { name: "Reference", role: "VIEWER", applications: ["CONSOLE_REST"] } },
    );
    const key = made.data.createAccessToken.key ?? "";
    const tokenId = made.data.createAccessToken.accessToken?.id ?? "";

    await page.goto("/account/rest-api");
    await settle(page);
    await page.locator('[data-widget="rest-reference"]').waitFor();
    await screenshot(page, "rest-reference-01-1440");
    await choose(page, "Key to try with", `Reference · ${key.slice(0, "np_".length + 12)}… · VIEWER`);
    await page.getByLabel("API key", { exact: true }).fill(key);
    await page.getByText("List endpoints", { exact: true }).click();
    const operation = page.locator('[data-operation="listEndpoints"]');
    await operation.getByRole("button", { name: "Try it" }).click();
    await operation.locator('[data-result="200"]').waitFor();
    expect(await operation.locator('[data-result="200"]').textContent()).toContain('"data"');
    await screenshot(page, "rest-reference-02-tried-1440");

    await gqlFromPage(page, "mutation($id: ID!) { revokeAccessToken(id: $id) { id } }", { id: tokenId });
    await operation.getByRole("button", { name: "Try it" }).click();
    await operation.locator('[data-result="401"]').waitFor();
    expect(await operation.locator('[data-result="401"]').textContent()).toContain("The API key is not valid.");
    await screenshot(page, "rest-reference-03-refused-1440");

    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    await phone.goto("/account/rest-api");
    await settle(phone);
    await phone.getByText("List endpoints", { exact: true }).click();
    await phone.locator('[data-operation="listEndpoints"]').waitFor();
    await screenshot(phone, "rest-reference-04-390");
    expect(await scrollsSideways(phone)).toBe(false);

    // The browser logs the refusal this test provokes (the revoked key's 401) as a failed load: nothing else.
    expect(e2e.pageErrors.filter((line) => !/Failed to load resource: .* status of 401/.test(line))).toEqual([]);
  }, 180_000);
});
