// API keys end to end: the owner makes a key on the API keys screen and copies it from the dialog that
// shows it once; a script (this test) calls GraphQL with it; the owner revokes it with a confirmation and
// the script's next call is refused. The screen is looked at, and fits, at 1440 and 390 px.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { screenshot, settle, signInWithForm, useE2E } from "./harness.ts";

const e2e = useE2E();

/** A GraphQL call with `key` in x-api-key and no cookie, as a script sends it: its status and body. */
async function callWithKey(key: string) {
  const response = await fetch(`${e2e.service.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ query: "{ viewer { email } }" }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Whether the page scrolls sideways (content wider than the window). */
const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);

describe("API keys, end to end", () => {
  it("a key made on the screen calls GraphQL until it is revoked there", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 900 } });
    await signInWithForm(page);
    await page.goto("/account/api-keys");
    await settle(page);
    await page.getByText("No API keys yet").waitFor();
    await screenshot(page, "api-keys-01-empty-1440");

    await page.getByRole("button", { name: "Create API key" }).first().click();
    const form = page.locator(".ant-modal", { hasText: "Create an API key" });
    await form.waitFor();
    await form.getByLabel("Name", { exact: true }).fill("CI deploy job");
    await screenshot(page, "api-keys-02-create-form");
    await form.getByRole("button", { name: "Create API key" }).click();

    // Shown once, in a dialog that closes only when the owner says it was copied.
    const shown = page.locator(".ant-modal", { hasText: "Your new API key" });
    await shown.waitFor();
    const key = ((await shown.locator('[data-widget="secret-once"] code').textContent()) ?? "").trim();
    expect(key).toMatch(/^np_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    await screenshot(page, "api-keys-03-shown-once");
    await shown.getByRole("button", { name: "I have copied it" }).click();
    await shown.waitFor({ state: "detached" });

    // Listed by its prefix only; the key itself is nowhere on the page any more.
    const row = page.locator(".np-table-row", { hasText: "CI deploy job" });
    await row.waitFor();
    expect(await row.textContent()).toContain(key.slice(0, "np_".length + 12));
    expect(await page.content()).not.toContain(key);

    const allowed = await callWithKey(key);
    expect(allowed).toEqual({ status: 200, body: { data: { viewer: { email: "demo@nodeplane.local" } } } });
    // Its last use shows once the list is read again.
    await page.reload();
    await settle(page);
    await screenshot(page, "api-keys-04-list-1440");

    await row.getByRole("button", { name: "Revoke" }).click();
    const confirm = page.locator(".ant-modal-confirm", { hasText: "Revoke this API key?" });
    await confirm.waitFor();
    await screenshot(page, "api-keys-05-revoke-confirm");
    await confirm.getByRole("button", { name: "Revoke" }).click();
    await row.getByText("Revoked").waitFor();
    await screenshot(page, "api-keys-06-revoked");

    const refused = await callWithKey(key);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({
      data: null,
      errors: [{ message: "The API key is not valid.", extensions: { code: "UNAUTHENTICATED" } }],
    });

    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    await phone.goto("/account/api-keys");
    await settle(phone);
    await phone.getByText("CI deploy job").first().waitFor();
    await screenshot(phone, "api-keys-07-list-390");
    expect(await scrollsSideways(phone)).toBe(false);

    expect(e2e.pageErrors).toEqual([]);
  }, 180_000);
});
