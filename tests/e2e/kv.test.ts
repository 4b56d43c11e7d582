// The key-value store end to end: an address book uploaded from a file in parts with the progress bar
// (one part's first attempt fails and is sent again), then seen in the overview and its detail page (reloaded:
// a key with a dot is a deep link like any other).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, useE2E } from "./harness.ts";

const e2e = useE2E();

describe("key-value store", () => {
  it("uploads an address book from a file with a progress bar, a failed part sent again", async () => {
    const addresses = Array.from({ length: 50_000 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const file = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-kv-")), "addresses.txt");
    writeFileSync(file, `${addresses.join("\n")}\n`);

    const page = await e2e.newPage();
    await page.goto("/");
    await page.getByLabel("Email").fill("demo@nodeplane.local");
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /address books/i })
      .click();
    await page.getByText("No address books yet").waitFor();

    // Each part takes a moment (so the bar is seen moving); part 2's first attempt breaks.
    const attempts = new Map<string, number>();
    await page.route("**/kv-uploads/**", async (route) => {
      const part = /\/parts\/(\d+)/.exec(route.request().url())?.[1] ?? "";
      attempts.set(part, (attempts.get(part) ?? 0) + 1);
      if (part === "2" && attempts.get(part) === 1) return route.abort("connectionreset");
      await new Promise((resolve) => setTimeout(resolve, 700));
      await route.continue();
    });

    await page.getByLabel("Key to upload into").fill("watched.addresses");
    // The drop zone's button, from the keyboard, opens the file chooser; the file's name and size show before it is sent.
    const chooser = page.waitForEvent("filechooser");
    await page.getByRole("button", { name: "choose one" }).focus();
    await page.keyboard.press("Enter");
    await (await chooser).setFiles(file);
    await page.locator("[data-widget=kv-upload]").getByText("addresses.txt").waitFor();
    await page.locator("[data-widget=kv-upload]").getByText("2.1 MiB").waitFor();
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText(/Part 2 of 3/).waitFor();
    const progress = page.locator("[data-widget=kv-upload] .ant-progress");
    await expect(progress.isVisible()).resolves.toBe(true);
    await screenshot(page, "kv-upload-progress");

    await page.getByText("Added 50,000 addresses to watched.addresses.").waitFor({ timeout: 60_000 });
    expect(attempts.get("2")).toBe(2);
    expect(attempts.get("1")).toBe(1);
    const row = page.getByRole("row", { name: /watched\.addresses/ });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("50,000");
    await screenshot(page, "kv-upload-done");

    await row.getByRole("link", { name: "watched.addresses" }).click();
    await page.getByRole("heading", { name: "watched.addresses" }).waitFor();
    // Its address is a deep link, though the key's dot reads like a file's extension.
    await page.reload();
    await page.getByRole("heading", { name: "watched.addresses" }).waitFor();
    await page.getByText("50,000 total").waitFor();
    await page.getByPlaceholder("Search addresses").fill("c350");
    await page.getByPlaceholder("Search addresses").press("Enter");
    await page.getByText("0x000000000000000000000000000000000000c350").waitFor();
    await screenshot(page, "kv-address-book-detail");
    // The browser logs the part broken on purpose; nothing else may fail.
    expect(e2e.pageErrors.filter((error) => !error.includes("net::ERR_CONNECTION_RESET"))).toEqual([]);
  }, 180_000);

  it("refuses a file over 64 MiB at initiate before sending a part, and says in the service's words why a part was refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nodeplane-e2e-kv-"));
    const tooBig = join(dir, "too-big.txt");
    writeFileSync(tooBig, Buffer.alloc(65 * 1024 * 1024, "a\n"));

    const page = await e2e.newPage();
    await page.goto("/");
    await page.getByLabel("Email").fill("demo@nodeplane.local");
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /address books/i })
      .waitFor();
    await page.goto("/kv/lists");
    const partsSent: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/kv-uploads/")) partsSent.push(request.url());
    });

    await page.getByLabel("Key to upload into").fill("refused_list");
    await page.getByLabel("File to upload").setInputFiles(tooBig);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page
      .getByText(
        "This file is 65.0 MiB; an upload is at most 64 MiB. Split the file into files of 64 MiB or less and upload each into the same key.",
      )
      .waitFor();
    expect(partsSent).toEqual([]);

    // Every attempt at part 1 is refused as an expired URL would be.
    await page.route("**/kv-uploads/**", (route) =>
      route.fulfill({
        status: 403,
        contentType: "application/json",
        body: JSON.stringify({ error: "This part URL is not valid or has expired.", code: "FORBIDDEN" }),
      }),
    );
    // Dropped on the drop zone.
    const dropped = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(["one\ntwo\n"], "small.txt", { type: "text/plain" }));
      return transfer;
    });
    await page.locator(".np-dropzone").dispatchEvent("drop", { dataTransfer: dropped });
    await page.locator("[data-widget=kv-upload]").getByText("small.txt").waitFor();
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText("Part 1 could not be sent: This part URL is not valid or has expired.").waitFor();
    await screenshot(page, "kv-upload-part-refused");
    await page.getByRole("button", { name: "Cancel upload" }).click();
    await page.getByRole("button", { name: "Cancel upload" }).last().click();
    await page.getByText("Upload cancelled; its parts were deleted.").waitFor();
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);
});
