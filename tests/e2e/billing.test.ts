// Billing end to end, as the demo owner: an upgrade shows its prorated charge on the upcoming invoice;
// the period's invoice downloads as a PDF, looked at as a picture (pdftoppm); and it is paid with a
// crypto charge by a real transfer on the service's local chain, the checkout page (its QR code) following
// the payment until it is confirmed, at 1440 and 390 px. Before that, a declined charge makes the
// subscription past due, which the banner above every page says.
// A crypto top-up, paid the same way, credits the account.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import {
  choose,
  endDemoBillingPeriod,
  screenshot,
  screenshotsDir,
  screenshotsWanted,
  settle,
  signInWithForm,
  useE2E,
} from "./harness.ts";

const NETWORK = "ethereum-sepolia";
const work = mkdtempSync(join(tmpdir(), "nodeplane-e2e-billing-"));
const networksFile = join(work, "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: [NETWORK], blockTimeSeconds: 1 } }));

const e2e = useE2E({
  env: {
    NODEPLANE_LOCAL_CHAIN: "1",
    NODEPLANE_NETWORKS_CONFIG: networksFile,
    NODEPLANE_SEED_TEST_TOKENS: "0",
    NODEPLANE_BILLING_CLOCK_MS: "1000",
    NODEPLANE_CRYPTO_CONFIRMATIONS: "2",
    // Its start-up lines (info) name the local node's address, which the payer sends to.
    LOG_LEVEL: "info",
  },
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The local chain node the service started (its start-up log names it). */
function chainUrl(): string {
  const match = new RegExp(`${NETWORK} \\(chain id \\d+\\) served by a local anvil at (http://[\\d.:]+)`).exec(
    readFileSync(e2e.service.logFile, "utf8"),
  );
  if (!match) throw new Error("the service's log names no local node");
  return match[1];
}

/** Share of a grey picture's pixels darker than mid-grey: text and rules, where a blank page has none. */
function inkShare(pgm: Buffer): number {
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 40).toString("latin1"));
  if (!header) throw new Error("not a PGM picture");
  const pixels = pgm.subarray(header[0].length);
  let dark = 0;
  for (const value of pixels) if (value < 128) dark++;
  return dark / pixels.length;
}

describe("billing, end to end", () => {
  it("upgrades with a prorated charge, downloads the invoice as a PDF, pays it with a crypto charge", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInWithForm(page);
    await page.goto("/billing");
    await settle(page);

    // An upgrade from Build is in force at once; its prorations are lines of the upcoming invoice.
    await page.getByRole("button", { name: "Upgrade" }).click();
    const dialog = page.locator(".ant-modal", { hasText: "Upgrade: in force at once" });
    await dialog.waitFor();
    await choose(page, "Plan", "Scale");
    await dialog.getByRole("button", { name: "Upgrade" }).click();
    await dialog.waitFor({ state: "detached" });
    const lines = page.locator("[data-view]", { hasText: "Its lines" });
    await lines.getByText(/^Remaining time on Scale until/).waitFor();
    await lines.getByText(/^Unused time on Build until/).waitFor();
    await page.getByRole("heading", { name: "Scale plan" }).waitFor();
    await screenshot(page, "billing-01-prorated-1440");

    // The period ends now: the billing clock closes it into an open invoice.
    await endDemoBillingPeriod(e2e.service);
    const invoiceRow = page.locator(".np-table-row", { hasText: "Open" });
    for (let tries = 0; tries < 20 && (await invoiceRow.count()) === 0; tries++) {
      await page.waitForTimeout(1000);
      await page.reload();
      await settle(page);
    }
    await invoiceRow.first().waitFor();

    // Its PDF, downloaded as the console offers it, then looked at as a picture.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      invoiceRow.first().getByRole("link").first().click(),
    ]);
    const pdf = join(work, "invoice.pdf");
    await download.saveAs(pdf);
    expect(readFileSync(pdf).subarray(0, 5).toString()).toBe("%PDF-");
    if (screenshotsWanted) {
      mkdirSync(screenshotsDir, { recursive: true });
      execFileSync("pdftoppm", [
        "-png",
        "-r",
        "80",
        "-singlefile",
        pdf,
        join(screenshotsDir, "billing-02-invoice-pdf"),
      ]);
    }
    execFileSync("pdftoppm", ["-gray", "-r", "40", "-singlefile", pdf, join(work, "invoice")]);
    const ink = inkShare(readFileSync(join(work, "invoice.pgm")));
    expect(ink).toBeGreaterThan(0.005);
    expect(ink).toBeLessThan(0.5);

    // A card that attaches and then declines: paying the invoice with it fails and the subscription is past
    // due. Every page says so above its content (here Streams, no billing page), linking to the fix.
    await page.goto("/billing/payment");
    await settle(page);
    await page.getByRole("button", { name: "Add card" }).first().click();
    const cardForm = page.locator(".ant-modal", { hasText: "Pay with a card" });
    await cardForm.waitFor();
    await cardForm.getByLabel("Card number").fill("4000 0000 0000 0341");
    await cardForm.getByLabel("Expiry month").fill("12");
    await cardForm.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
    await cardForm.getByLabel("CVC").fill("123");
    await cardForm.getByRole("button", { name: "Add card" }).click();
    await cardForm.waitFor({ state: "detached" });
    await page.goto("/billing");
    await settle(page);
    await invoiceRow.first().getByRole("button", { name: "Pay now" }).click();
    const confirmPay = page.locator(".ant-modal-confirm", { hasText: "to your payment method?" });
    await confirmPay.getByRole("button", { name: "Pay", exact: true }).click();
    await confirmPay.waitFor({ state: "detached" });
    await page.goto("/streams");
    await settle(page);
    const pastDue = page.locator("[data-slot='banners'] [data-view='alert']", { hasText: "Your payment failed" });
    await pastDue.waitFor();
    const fix = pastDue.getByRole("link", { name: "Retry the payment on the billing page" });
    expect(await fix.getAttribute("href")).toBe("/billing");
    await screenshot(page, "billing-02-past-due-banner-on-streams-1440");
    await fix.click();
    await page.waitForURL(/\/billing$/);
    await settle(page);
    await pastDue.waitFor();

    // Paid with crypto: the charge's page names an address and an amount, and follows the payment.
    await invoiceRow.first().getByRole("button", { name: "Pay with crypto" }).click();
    await page.waitForURL(/\/billing\/crypto\/[A-Z2-9]{8}$/);
    await settle(page);
    const checkout = page.locator("[data-view='detail']");
    await checkout.getByText("Waiting for payment").waitFor();
    await checkout.getByText(/^\d+:\d\d(:\d\d)? left$/).waitFor();
    await screenshot(page, "billing-03-crypto-checkout-1440");
    const field = (label: string) =>
      checkout.locator(".ant-descriptions-row", { has: page.locator("th", { hasText: label }) }).locator("code");
    const address = (await field("Send to").textContent())?.trim() ?? "";
    const amountEth = (await field("Amount (ETH)").textContent())?.trim() ?? "";
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(Number(amountEth)).toBeGreaterThan(0);
    // The payment request (EIP-681: the address, the chain and the amount in wei) as a QR code picture.
    const qr = checkout.getByRole("img", { name: /^QR code of the payment request/ });
    await qr.waitFor();
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    const request = (await field("Payment request").textContent())?.trim() ?? "";
    expect(request).toMatch(new RegExp(`^ethereum:${address}@\\d+\\?value=\\d+$`));

    const phone = await e2e.newPage({ viewport: { width: 390, height: 844 } });
    await signInWithForm(phone);
    await phone.goto(new URL(page.url()).pathname);
    await settle(phone);
    await phone.getByText("Waiting for payment").waitFor();
    // The banner above the page fits the phone's window beside the page's own cards.
    const phoneBanner = phone.locator("[data-slot='banners'] [data-view='alert']").first();
    await phoneBanner.waitFor();
    const bannerRight = await phoneBanner.evaluate((element) => element.getBoundingClientRect().right);
    const cardRight = await phone
      .locator("[data-view='detail']")
      .first()
      .evaluate((element) => element.getBoundingClientRect().right);
    expect(bannerRight).toBeLessThanOrEqual(cardRight + 1);
    // The long address and payment request wrap on a phone rather than widen the page.
    expect(
      await phone.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1),
    ).toBe(true);
    await screenshot(phone, "billing-04-crypto-checkout-390");

    // A transfer from one of the local chain's funded accounts, of the amount the page asks for.
    const rpc = new RpcClient(chainUrl());
    try {
      const [payer] = await rpc.call<string[]>("eth_accounts");
      // The wei the payment request asks for (the ether amount shown is the same, rounded for people).
      const wei = BigInt(/value=(\d+)$/.exec((await field("Payment request").textContent())?.trim() ?? "")?.[1] ?? "0");
      expect(wei).toBeGreaterThan(0n);
      await rpc.call("eth_sendTransaction", [{ from: payer, to: address, value: `0x${wei.toString(16)}` }]);
    } finally {
      await rpc.close();
    }
    await checkout.getByText("Confirmed", { exact: true }).first().waitFor({ timeout: 30_000 });
    await screenshot(page, "billing-05-crypto-confirmed-1440");
    await phone.getByText("Confirmed", { exact: true }).first().waitFor({ timeout: 30_000 });
    await screenshot(phone, "billing-06-crypto-confirmed-390");

    await page.goto("/billing");
    await settle(page);
    await page.locator(".np-table-row", { hasText: "Paid" }).first().waitFor();
    expect(await page.locator(".np-table-row", { hasText: "Open" }).count()).toBe(0);
    // Paid, the past-due banner is gone from every page.
    expect(
      await page.locator("[data-slot='banners'] [data-view='alert']", { hasText: "Your payment failed" }).count(),
    ).toBe(0);
    expect(e2e.pageErrors).toEqual([]);
  });

  it("a crypto top-up paid on the local chain credits the account, shown on the billing page", async () => {
    const page = await e2e.newPage({ viewport: { width: 1440, height: 900 } });
    await signInWithForm(page);
    await page.goto("/billing");
    await settle(page);
    const credit = page.locator("[data-view]", { hasText: "Account credit" }).first();
    await credit.getByText("$0.00").waitFor();
    await credit.getByRole("button", { name: "Top up with crypto" }).click();
    const form = page.locator(".ant-modal", { hasText: "Top up your account's credit" });
    await form.waitFor();
    await form.getByLabel("Amount, in US cents").fill("1000");
    await form.getByRole("button", { name: "Top up with crypto" }).click();
    await page.waitForURL(/\/billing\/crypto\/[A-Z2-9]{8}$/);
    await settle(page);
    const checkout = page.locator("[data-view='detail']");
    await checkout.getByText("Waiting for payment").waitFor();
    const request = checkout
      .locator(".ant-descriptions-row", { has: page.locator("th", { hasText: "Payment request" }) })
      .locator("code");
    const [, address, value] = /^ethereum:(0x[0-9a-fA-F]{40})@\d+\?value=(\d+)$/.exec(
      (await request.textContent())?.trim() ?? "",
    ) ?? ["", "", "0"];
    // $10 at the default $3,000 an ether, rounded up to the wei.
    expect(BigInt(value)).toBe((1000n * 10n ** 18n + 299_999n) / 300_000n);
    const rpc = new RpcClient(chainUrl());
    try {
      const [payer] = await rpc.call<string[]>("eth_accounts");
      await rpc.call("eth_sendTransaction", [{ from: payer, to: address, value: `0x${BigInt(value).toString(16)}` }]);
    } finally {
      await rpc.close();
    }
    await checkout.getByText("Confirmed", { exact: true }).first().waitFor({ timeout: 30_000 });

    await page.goto("/billing");
    await settle(page);
    await page.locator("[data-view]", { hasText: "Account credit" }).first().getByText("$10.00").waitFor();
    await screenshot(page, "billing-07-account-credit-1440");
    expect(e2e.pageErrors).toEqual([]);
  });
});
