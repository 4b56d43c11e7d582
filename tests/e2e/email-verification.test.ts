// A new account's e-mail verification in Chromium: the banner says where the link is (this service has
// no mail server: the outbox), Resend email answers and is limited, and the link from the outbox,
// opened signed out, verifies the address, after which the banner is gone.
import { describe, expect, it } from "vitest";
import { axeViolations, screenshot, useE2E } from "./harness.ts";

const e2e = useE2E();

describe("e-mail verification", () => {
  it("the banner resends the link, and the link verifies the address signed out", async () => {
    const page = await e2e.newPage();
    const email = `verify-${Date.now()}@example.test`;
    await page.goto("/sign-up");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("a-verifying-password");
    await page.getByRole("button", { name: /create account/i }).click();

    const banner = page.getByRole("alert").filter({ hasText: "Verify your email address" });
    await banner.getByText(`the link for ${email} waits in the outbox`).waitFor();
    expect(await banner.getByRole("link", { name: "Notifications" }).getAttribute("href")).toBe(
      "/streams/notifications",
    );

    await banner.getByRole("button", { name: "Resend email" }).click();
    await banner.getByRole("status").getByText(`A new link to ${email} is in the outbox`).waitFor();
    await banner.getByRole("button", { name: "Resend email" }).click();
    await banner
      .getByRole("alert")
      .getByText(/less than a minute ago\. Try again in \d+ seconds?\./)
      .waitFor();
    await screenshot(page, "email-verification-banner");
    expect(await axeViolations(page, "/ with the banner")).toEqual([]);

    // The newest mail in the outbox, as the Notifications page lists it.
    const bodies = await page.evaluate(async () => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ notificationOutbox { notifications { body } } }" }),
      });
      const answer = (await response.json()) as { data: { notificationOutbox: { notifications: { body: string }[] } } };
      return answer.data.notificationOutbox.notifications.map((mail) => mail.body);
    });
    expect(bodies).toHaveLength(2);
    const link = bodies[0]?.match(/https?:\/\/\S+/)?.[0] ?? "";
    expect(new URL(link).pathname).toBe("/verify-email");

    const signedOut = await e2e.newPage();
    await signedOut.goto(link);
    await signedOut.getByRole("status").getByText(`${email} is verified.`).waitFor();
    expect(await axeViolations(signedOut, "/verify-email")).toEqual([]);
    await signedOut.reload();
    await signedOut
      .getByRole("alert")
      .getByText(/not valid or was used already/)
      .waitFor();

    await page.reload();
    await page.getByRole("heading", { name: "Dashboard" }).waitFor();
    expect(await page.getByText("Verify your email address").count()).toBe(0);
    expect(e2e.pageErrors).toEqual([]);
  });
});
