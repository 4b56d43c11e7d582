// @vitest-environment jsdom
// A screen's own time range (the metrics screens): one control above the views, whose bounds every
// view's query reads as $query.from/$query.to; kept in the URL (a reload keeps it, Back returns to the
// range before); a range the service refuses shows its reason, an empty one the charts' empty state.
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { createMemoryRouter } from "react-router";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { GqlError, type Transport } from "../../../renderer/index.ts";
import type { Manifest } from "../../../renderer/types.ts";
import {
  presetLabel,
  rangeBounds,
  rangeChanges,
  rangeValues,
  readRangeChoice,
} from "../../../renderer/views/rangeState.ts";
import { fixtureTransport, installDomStandIns, registryFor, renderRoute, routeFor, viewerFor } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

type Router = ReturnType<typeof createMemoryRouter>;
type Call = { name: string; variables?: Record<string, unknown> };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const registry = registryFor("owner");

function manifest(id: string): Manifest {
  const found = registry.screens.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no screen ${id}`);
  return found;
}

/** Renders a screen (its route, then `search`) and records every query it sends. */
function renderScreen(id: string, search = "", transport?: (calls: Call[]) => Transport) {
  const calls: Call[] = [];
  let router: Router | undefined;
  render(
    renderRoute(`${routeFor(manifest(id))}${search}`, {
      registry,
      viewer: viewerFor("OWNER"),
      transport: transport ? transport(calls) : fixtureTransport(calls),
      onRouter: (created) => {
        router = created;
      },
    }),
  );
  return {
    calls: (name: string) => calls.filter((call) => call.name === name).map((call) => call.variables ?? {}),
    router: () => router as Router,
  };
}

/** The span a query asks for, in ms (NaN without bounds). */
const span = (variables: Record<string, unknown>) =>
  Date.parse(String(variables.endDate)) - Date.parse(String(variables.startDate));

async function chooseRange(label: string) {
  fireEvent.mouseDown(await screen.findByRole("combobox", { name: "Time range" }, { timeout: 10_000 }));
  fireEvent.click(await screen.findByText(label, { selector: ".ant-select-item-option-content" }));
}

/** The label the control shows for the chosen range. */
const chosenRange = () =>
  screen.getByRole("combobox", { name: "Time range" }).closest(".ant-select")?.querySelector(".ant-select-content")
    ?.textContent;

describe("a screen's time range", () => {
  it("function metrics: one control for every view, the last 31 days by default, a preset asks again, Back returns", async () => {
    const { calls, router } = renderScreen("functions.metrics");
    await screen.findByText("Totals", {}, { timeout: 10_000 });
    expect(await screen.findAllByRole("combobox", { name: "Time range" }, { timeout: 10_000 })).toHaveLength(1);
    // What the service does without a range: the last 31 days, ending now.
    await waitFor(() => expect(calls("FunctionMetrics").length).toBeGreaterThan(0));
    expect(calls("FunctionMetrics").every((variables) => span(variables) === 31 * DAY)).toBe(true);
    expect(chosenRange()).toBe("Last 31 days");

    await chooseRange("Last hour");
    await waitFor(() => expect(span(calls("FunctionMetrics").at(-1) ?? {})).toBe(HOUR));
    expect(router().state.location.search).toBe("?range=1h");
    expect(chosenRange()).toBe("Last hour");

    await act(() => router().navigate(-1));
    await waitFor(() => expect(chosenRange()).toBe("Last 31 days"));
    expect(router().state.location.search).toBe("");
    await waitFor(() => expect(span(calls("FunctionMetrics").at(-1) ?? {})).toBe(31 * DAY));
  }, 30_000);

  it("stream metrics: all time by default (the query's own window), a preset from the URL after a reload", async () => {
    const first = renderScreen("streams.metrics");
    await waitFor(() => expect(first.calls("StreamMetrics").length).toBeGreaterThan(0));
    expect(
      first.calls("StreamMetrics").every((variables) => !("startDate" in variables || "endDate" in variables)),
    ).toBe(true);
    await waitFor(() => expect(chosenRange()).toBe("All time"));
    await chooseRange("Last 7 days");
    await waitFor(() => expect(span(first.calls("StreamMetrics").at(-1) ?? {})).toBe(7 * DAY));
    const search = first.router().state.location.search;
    expect(search).toBe("?range=7d");
    cleanup();

    const reloaded = renderScreen("streams.metrics", search);
    await waitFor(() => expect(reloaded.calls("StreamMetrics").length).toBeGreaterThan(0));
    expect(reloaded.calls("StreamMetrics").every((variables) => span(variables) === 7 * DAY)).toBe(true);
    await waitFor(() => expect(chosenRange()).toBe("Last 7 days"));
  }, 30_000);

  it("a range the service refuses shows its reason in every view; an empty range, the charts' empty state", async () => {
    const refusal = "The end of the window must be after its start.";
    const refusing = (calls: Call[]): Transport => {
      const recorded = fixtureTransport(calls);
      return async (document, variables) => {
        if (variables?.startDate && Date.parse(String(variables.startDate)) >= Date.parse(String(variables.endDate))) {
          calls.push({ name: "FunctionMetrics", variables });
          throw new GqlError(refusal, "BAD_USER_INPUT", [{ pointer: "/endDate", message: refusal }]);
        }
        return recorded(document, variables);
      };
    };
    const charts = manifest("functions.metrics").views.filter((view) => view.kind === "chart").length;
    const { calls } = renderScreen(
      "functions.metrics",
      "?from=2026-11-02T00:00:00.000Z&to=2026-11-01T00:00:00.000Z",
      refusing,
    );
    // The totals and every chart say why, and the control stays to choose another range.
    await waitFor(() => expect(screen.getAllByText(refusal)).toHaveLength(1 + charts), { timeout: 10_000 });
    expect(calls("FunctionMetrics")[0]).toMatchObject({
      startDate: "2026-11-02T00:00:00.000Z",
      endDate: "2026-11-01T00:00:00.000Z",
    });
    expect(screen.getByRole("combobox", { name: "Time range" })).toBeTruthy();

    await chooseRange("Last 24 hours");
    await waitFor(() => expect(screen.getAllByText("No data for this period")).toHaveLength(charts), {
      timeout: 10_000,
    });
    expect(screen.queryByText(refusal)).toBeNull();
  }, 30_000);

  it("the all preset gives no bounds; a preset ends now; choosing one clears a custom range", () => {
    const range = { from: "from", to: "to", presets: ["1h", "all"], default: "all" };
    const now = Date.parse("2026-11-27T06:00:00Z");
    expect(readRangeChoice(range, new URLSearchParams())).toEqual({ preset: "all" });
    expect(presetLabel("all")).toBe("All time");
    expect(rangeBounds({ preset: "all" }, now)).toBeUndefined();
    expect(rangeValues(range, { preset: "all" }, now)).toEqual({ from: undefined, to: undefined });
    expect(rangeValues(range, { preset: "1h" }, now)).toEqual({
      from: "2026-11-27T05:00:00.000Z",
      to: "2026-11-27T06:00:00.000Z",
    });
    expect(rangeChanges(range, { preset: "1h" })).toEqual({ range: "1h", from: null, to: null });
    expect(rangeChanges(range, { from: "a", to: "b" })).toEqual({ range: null, from: "a", to: "b" });
  });
});
