// @vitest-environment jsdom
// A VIEWER sees no enabled action that changes anything, on every screen the service gives them.
import { cleanup, render, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Action, Manifest } from "../../../renderer/types.ts";
import { installDomStandIns, registryFor, renderRoute, routeFor, viewerFor } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

function mutatingLabels(manifest: Manifest): Set<string> {
  const labels = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === "object") {
      const action = value as Action;
      if (typeof action.label === "string" && typeof action.mutation === "string") labels.add(action.label);
      Object.values(value).forEach(visit);
    }
  };
  visit(manifest.views);
  return labels;
}

const registry = registryFor("viewer");

describe("a VIEWER changes nothing", () => {
  it("the service serves the viewer no ADMIN-only screen", async () => {
    expect(registry.screens.length).toBeGreaterThan(0);
    expect(
      registry.screens.some((manifest) => manifest.requires?.role === "ADMIN" || manifest.requires?.role === "OWNER"),
    ).toBe(false);
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
        expect(container.textContent).toContain("not authorised");
        return;
      }
      const labels = mutatingLabels(manifest);
      const enabled = [...container.querySelectorAll("button")].filter((button) => !button.disabled);
      for (const button of enabled) {
        const text = button.textContent?.trim() ?? "";
        expect(labels.has(text), `enabled mutating button "${text}"`).toBe(false);
        expect(button.type === "submit", `enabled submit button "${text}"`).toBe(false);
      }
      expect(container.querySelectorAll(".np-item-action").length).toBe(0);
    }, 30_000);
  }
});
