// @vitest-environment jsdom
// A VIEWER sees no enabled action that changes anything of the account, on every screen the service
// gives them (their own name and password they change), and a screen their role does not open says
// which role it needs.
import { cleanup, render, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Action, Manifest } from "../../../renderer/types.ts";
import { installDomStandIns, registryFor, renderRoute, routeFor, viewerFor } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

/**
 * The labels of mutating actions and form submits: `closed` for the account's things, `open` for those
 * the manifest opens to every member (`"role": "VIEWER"`: their own name and password).
 */
function mutatingLabels(manifest: Manifest): { closed: Set<string>; open: Set<string> } {
  const closed = new Set<string>();
  const open = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === "object") {
      const action = value as Action & { submit?: { label?: string } };
      const label = action.submit?.label ?? action.label;
      if (typeof label === "string" && typeof action.mutation === "string")
        (action.role === "VIEWER" ? open : closed).add(label);
      Object.values(value).forEach(visit);
    }
  };
  visit(manifest.views);
  for (const label of open) closed.delete(label);
  return { closed, open };
}

const registry = registryFor("viewer");

describe("a VIEWER changes nothing", () => {
  it("the service serves the viewer no ADMIN-only screen", async () => {
    expect(registry.screens.length).toBeGreaterThan(0);
    expect(
      registry.screens.some((manifest) => manifest.requires?.role === "ADMIN" || manifest.requires?.role === "OWNER"),
    ).toBe(false);
  });

  it("an address of a screen the role does not open says it needs the Admin role", async () => {
    const { findByText } = render(
      renderRoute("/endpoints/new", {
        registry: {
          ...registry,
          locked: [
            {
              id: "endpoints.create",
              route: "/endpoints/new",
              title: "Create an endpoint",
              requires: { role: "ADMIN" },
            },
          ],
        },
        viewer: viewerFor("VIEWER"),
      }),
    );
    expect(await findByText("This page needs the Admin role")).toBeTruthy();
  });

  for (const manifest of registry.screens) {
    it(`${manifest.id}: every mutating action and submit button is disabled`, async () => {
      const { container } = render(renderRoute(routeFor(manifest), { registry, viewer: viewerFor("VIEWER") }));
      await waitFor(() => expect(container.querySelector(`[data-screen="${manifest.id}"]`)).not.toBeNull());
      // Wait for data so row and record actions have rendered.
      await waitFor(() => expect(container.querySelector(".ant-skeleton, .ant-spin-spinning")).toBeNull(), {
        timeout: 10_000,
      });
      if (manifest.requires?.role && manifest.requires.role !== "VIEWER") {
        expect(container.textContent).toContain("needs the");
        return;
      }
      const { closed, open } = mutatingLabels(manifest);
      const enabled = [...container.querySelectorAll("button")].filter((button) => !button.disabled);
      for (const button of enabled) {
        const text = button.textContent?.trim() ?? "";
        expect(closed.has(text), `enabled mutating button "${text}"`).toBe(false);
        expect(button.type === "submit" && !open.has(text), `enabled submit button "${text}"`).toBe(false);
      }
      expect(container.querySelectorAll(".np-item-action").length).toBe(0);
    }, 30_000);
  }
});
