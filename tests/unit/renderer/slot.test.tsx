// @vitest-environment jsdom
// The shell's banners slot: the screens declared for it show above any page, each banner saying what is
// wrong and linking to the fix, and a slotted screen has no address of its own.
import { cleanup, render, screen, within } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SlotViews, type Transport } from "../../../renderer/index.ts";
import {
  fixtureTransport,
  installDomStandIns,
  manifests,
  registryFor,
  renderRoute,
  viewerFor,
  withDataProviders,
} from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const registry = registryFor("owner");
const slotted = manifests.filter((entry) => entry.manifest.slot === "banners");

/** The recorded answers, but an account whose payment failed and whose endpoint reached its limit. */
function troubledAccount(calls: { name: string }[]): Transport {
  const recorded = fixtureTransport(calls);
  return async (document, variables) => {
    if (/\bquery AccountBanners\b/.test(document) || document.startsWith("# operation AccountBanners")) {
      calls.push({ name: "AccountBanners" });
      return {
        accountBanners: {
          pastDue: [{ id: "inv-1", number: "NP-0001", amountDue: "$49.00" }],
          limitReached: [{ id: "ep-1", name: "Main", network: "ethereum-mainnet" }],
          trialEnding: [],
        },
      };
    }
    return recorded(document, variables);
  };
}

describe("the banners slot", () => {
  it("is declared by the billing banners screen", () => {
    expect(slotted.map((entry) => entry.manifest.id)).toEqual(["billing.banners"]);
  });

  it("shows each banner with what is wrong and a link to its fix, on any page", async () => {
    const calls: { name: string }[] = [];
    const { container } = render(withDataProviders(<SlotViews slot="banners" />, troubledAccount(calls), registry));
    const pastDue = await screen.findByText("Your payment failed: the subscription is past due");
    const pastDueBanner = pastDue.closest<HTMLElement>("[data-view='alert']");
    if (!pastDueBanner) throw new Error("the past-due title is in no banner");
    expect(within(pastDueBanner).getByRole("link", { name: "Invoice NP-0001" }).getAttribute("href")).toBe(
      "/billing/payment",
    );
    expect(
      within(pastDueBanner).getByRole("link", { name: "Retry the payment on the billing page" }).getAttribute("href"),
    ).toBe("/billing");
    const limit = (await screen.findByText("An endpoint reached the plan's monthly limit")).closest<HTMLElement>(
      "[data-view='alert']",
    );
    if (!limit) throw new Error("the limit title is in no banner");
    expect(within(limit).getByRole("link", { name: "Main" }).getAttribute("href")).toBe("/endpoints/ep-1");
    expect(within(limit).getByRole("link", { name: "Change the plan on the billing page" }).getAttribute("href")).toBe(
      "/billing",
    );
    // Nothing to say of the trial: no banner for it. The three banners share one query.
    expect(screen.queryByText(/free trial/)).toBeNull();
    expect(container.querySelectorAll("[data-slot='banners'] [data-view='alert']")).toHaveLength(2);
    expect(calls.filter((call) => call.name === "AccountBanners")).toHaveLength(1);
  });

  it("shows nothing for a role the slotted screen does not open", async () => {
    const locked = {
      ...registry,
      screens: registry.screens.map((manifest) =>
        manifest.slot ? { ...manifest, requires: { role: "ADMIN" as const } } : manifest,
      ),
    };
    const calls: { name: string }[] = [];
    const { container } = render(
      withDataProviders(<SlotViews slot="banners" />, troubledAccount(calls), locked, "VIEWER"),
    );
    // An admin beside it sees the banners: by then the viewer's would have shown too.
    render(withDataProviders(<SlotViews slot="banners" />, troubledAccount([]), locked, "ADMIN"));
    await screen.findByText("Your payment failed: the subscription is past due");
    expect(container.querySelector("[data-view='alert']")).toBeNull();
    expect(calls).toEqual([]);
  });

  it("gives a slotted screen no page at its route", async () => {
    const [{ manifest }] = slotted;
    render(renderRoute(manifest.route, { registry, viewer: viewerFor("OWNER") }));
    await screen.findByText("not found");
  });
});
