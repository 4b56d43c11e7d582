// Payments end to end: the owner sees which provider is in use and its test numbers, adds a test card on
// the billing page's Payment and tax tab, adds a tax id and billing data, and looks at the tab at 1440
// and 390 px; a declined test card is refused beside its field. A card whose bank asks for authentication
// leaves its invoice saying "Authentication needed" until the payer fails, then completes, the test bank's dialog.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  endDemoBillingPeriod,
  type Service,
  screenshot,
  serviceDatabase,
  settle,
  signInWithForm,
  useE2E,
} from "./harness.ts";

// The billing clock ticks every second: a period ended by the test closes, and its invoice is charged, at once.
const e2e = useE2E({ env: { NODEPLANE_BILLING_CLOCK_MS: "1000" } });

const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);

async function addCard(page: Page, number: string) {
  await page.getByRole("button", { name: "Add card" }).first().click();
  const form = page.locator(".ant-modal", { hasText: "Pay with a card" });
  await form.waitFor();
  await form.getByLabel("Card number").fill(number);
  await form.getByLabel("Expiry month").fill("12");
  await form.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
  await form.getByLabel("CVC").fill("123");
  return form;
}

/**
 * Waits until the billing clock has charged the demo account's invoice and the bank holds the charge. The
 * charge and the past-due subscription are written in one transaction, so a page loaded after this shows
 * the invoice's row and the banner together. A page loaded while the clock charges may not: the banners and
 * the invoice list are two requests, and the commit can fall between them (the banner then never came).
 */
async function chargeAwaitingAction(service: Service) {
  const db = await serviceDatabase(service);
  try {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const { rowCount } = await db.query(
        `select 1 from payment_charges c join memberships m on m.account_id = c.account_id join users u on u.id = m.user_id
         where u.email = $1 and c.status = 'requires_action'`,
        ["demo@nodeplane.local"],
      );
      if (rowCount) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the billing clock did not charge the invoice within 60 s");
  } finally {
    await db.end();
  }
}

describe("payments, end to end", () => {
  it("adds a test card, a tax id and billing data on the Payment and tax tab", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 900 } });
    await signInWithForm(page);
    await page.goto("/billing/payment");
    await settle(page);
    await page.getByText("Built-in test provider").first().waitFor();
    await page.getByText("No payment network is connected").first().waitFor();
    await page.getByText("4242424242424242").first().waitFor();
    await screenshot(page, "payments-01-tab-1440");

    const declined = await addCard(page, "4000 0000 0000 0002");
    await declined.getByRole("button", { name: "Add card" }).click();
    await declined.getByText(/Your card was declined/).waitFor();
    await screenshot(page, "payments-02-declined");
    await declined
      .getByRole("button", { name: /cancel/i })
      .first()
      .click();
    await declined.waitFor({ state: "detached" });

    const good = await addCard(page, "4242 4242 4242 4242");
    await good.getByRole("button", { name: "Add card" }).click();
    await good.waitFor({ state: "detached" });
    await page.getByText("Visa ending 4242").first().waitFor();

    await page.getByRole("button", { name: "Add a tax id" }).first().click();
    const taxForm = page.locator(".ant-modal", { hasText: "Add a tax id" });
    await taxForm.waitFor();
    await taxForm.getByLabel("Type").click();
    await page.locator(".ant-select-item-option", { hasText: "European VAT number" }).first().click();
    await taxForm.getByLabel("Number").fill("DE12345678");
    await taxForm.getByRole("button", { name: "Add a tax id" }).click();
    await taxForm.getByText(/DE and 9 digits, like DE123456789/).waitFor();
    await taxForm.getByLabel("Number").fill("DE 123 456 789");
    await taxForm.getByRole("button", { name: "Add a tax id" }).click();
    await taxForm.waitFor({ state: "detached" });
    await page.getByText("DE123456789").first().waitFor();

    await page.getByRole("button", { name: "Edit" }).first().click();
    const dataForm = page.locator(".ant-modal", { hasText: "Billing data" });
    await dataForm.waitFor();
    await dataForm.getByLabel("Billed to").fill("Acme Nodes GmbH");
    await dataForm.getByRole("button", { name: "Edit" }).click();
    await dataForm.waitFor({ state: "detached" });
    await page.getByText("Acme Nodes GmbH").first().waitFor();
    await settle(page);
    await screenshot(page, "payments-03-done-1440");
    expect(await scrollsSideways(page)).toBe(false);

    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    await phone.goto("/billing/payment");
    await settle(phone);
    await phone.getByText("Visa ending 4242").first().waitFor();
    await screenshot(phone, "payments-04-tab-390");
    expect(await scrollsSideways(phone)).toBe(false);
    await phone.goto("/billing");
    await settle(phone);
    await screenshot(phone, "payments-05-billing-390");
    expect(e2e.pageErrors).toEqual([]);
  });

  it("a payment that asks for authentication: the invoice says so, fails on the test bank's dialog, then is paid", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 900 } });
    await signInWithForm(page);
    await page.goto("/billing/payment");
    await settle(page);
    const card = await addCard(page, "4000 0027 6000 3184");
    await card.getByRole("button", { name: "Add card" }).click();
    await card.waitFor({ state: "detached" });
    await page.getByText("Visa ending 3184").first().waitFor();

    // The period ends now: the clock closes it and charges the invoice, which the card's bank holds.
    await endDemoBillingPeriod(e2e.service);
    await chargeAwaitingAction(e2e.service);
    await page.goto("/billing");
    await settle(page);
    const waiting = page.locator(".np-table-row", { hasText: "Authentication needed" });
    await waiting.first().waitFor();
    await page.getByText("Your payment failed: the subscription is past due").first().waitFor();
    // The banner asks for the authentication, not for another card; the Payment column keeps its words whole.
    await page.getByRole("link", { name: "Complete the authentication on the billing page" }).first().waitFor();
    expect(await page.getByText(/if it was declined/).count()).toBe(0);
    const payment = await waiting.first().getByText("Authentication needed").boundingBox();
    expect(payment?.height).toBeLessThan(30);
    await screenshot(page, "payments-06-authentication-needed-1440");
    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    await phone.goto("/billing");
    await settle(phone);
    await phone.locator(".np-table-row", { hasText: "Authentication needed" }).first().waitFor();
    await phone.getByRole("link", { name: "Complete the authentication on the billing page" }).first().waitFor();
    await screenshot(phone, "payments-06-authentication-needed-390");
    expect(await scrollsSideways(phone)).toBe(false);

    // Failed on the test bank's dialog: the invoice stays open and past due, with nothing to authenticate.
    await waiting.first().getByRole("button", { name: "More actions" }).click();
    await page.getByRole("menuitem", { name: "Fail authentication" }).click();
    const fail = page.locator(".ant-modal-confirm", { hasText: "fail the authentication" });
    await fail.getByRole("button", { name: "Fail authentication" }).click();
    await page
      .getByText(/The payment's authentication failed/)
      .first()
      .waitFor();
    await page.reload();
    await settle(page);
    const open = page.locator(".np-table-row", { hasText: "Open" });
    await open.first().waitFor();
    expect(await waiting.count()).toBe(0);

    // Paid again: the bank asks again, and this time the payer authenticates.
    await open.first().getByRole("button", { name: "Pay now" }).click();
    const pay = page.locator(".ant-modal-confirm", { hasText: "to your payment method?" });
    await pay.getByRole("button", { name: "Pay" }).click();
    await page
      .getByText(/asks you to authenticate this payment/)
      .first()
      .waitFor();
    await page.reload();
    await settle(page);
    await waiting.first().getByRole("button", { name: "Authenticate" }).click();
    const authenticate = page.locator(".ant-modal-confirm", { hasText: "Test bank: authenticate" });
    await authenticate.getByRole("button", { name: "Complete authentication" }).click();
    await page.getByText("Authenticated: the invoice is paid").first().waitFor();
    await page.locator(".np-table-row", { hasText: "Paid" }).first().waitFor();
    expect(await open.count()).toBe(0);
    expect(await waiting.count()).toBe(0);
    await settle(page);
    await screenshot(page, "payments-07-authenticated-1440");
    expect(e2e.pageErrors).toEqual([]);
  }, 180_000);
});
