// @vitest-environment jsdom
// A field pointer a manifest uses that its operation's answer does not carry (a column, a detail field,
// a list's rows, a chart's rows or encode) fails loudly in development and tests, naming the screen, the
// pointer and the operation; in production it shows a visible placeholder and logs once per (screen,
// pointer), however many cells or renders meet it (decision 0101).
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ManifestFault } from "../../../renderer/faults.tsx";
import { getPath, getPointer } from "../../../renderer/resolve.ts";
import type { ChartView, DetailView, ListView, Manifest, Registry } from "../../../renderer/types.ts";
import {
  installDomStandIns,
  manifests,
  recordedResponses,
  registryFor,
  renderRoute,
  routeFor,
  viewerFor,
} from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(() => {
  cleanup();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const registry = registryFor("owner");

function manifestOf(id: string): Manifest {
  const found = manifests.find((entry) => entry.manifest.id === id);
  if (!found) throw new Error(`no manifest ${id}`);
  return structuredClone(found.manifest);
}

/** The endpoints list with its first column's pointer (or its rows path) changed. */
function brokenList(change: (view: ListView) => void): Manifest {
  const manifest = manifestOf("endpoints.list");
  const view = manifest.views.find((candidate): candidate is ListView => candidate.kind === "list");
  if (!view) throw new Error("endpoints.list has no list");
  change(view);
  return manifest;
}

/** The endpoint's detail with its first field's pointer changed. */
function brokenDetail(pointer: string): Manifest {
  const manifest = manifestOf("endpoints.detail");
  const view = manifest.views.find((candidate): candidate is DetailView => candidate.kind === "detail");
  if (!view) throw new Error("endpoints.detail has no detail");
  view.sections[0].fields[0].field = pointer;
  return manifest;
}

/** The usage screen with only its usage-over-time chart, changed. */
function brokenChart(change: (view: ChartView) => void): Manifest {
  const manifest = manifestOf("usage.overview");
  const chart = manifest.views.find(
    (candidate): candidate is ChartView =>
      candidate.kind === "chart" && candidate.series[0].rows === "usage.usagePoints",
  );
  if (!chart) throw new Error("usage.overview has no usage chart");
  change(chart);
  manifest.views = [chart];
  return manifest;
}

function registryWith(manifest: Manifest): Registry {
  return { ...registry, screens: registry.screens.map((each) => (each.id === manifest.id ? manifest : each)) };
}

/** Renders the screen; what the console logged as a Nodeplane screen fault, and every error React reported. */
function renderScreen(manifest: Manifest) {
  const errors = vi.spyOn(console, "error").mockImplementation(() => {});
  errors.mockClear();
  const view = render(
    renderRoute(routeFor(manifest), { registry: registryWith(manifest), viewer: viewerFor("OWNER") }),
  );
  const faultLogs = () =>
    errors.mock.calls.map((call) => call.map(String).join(" ")).filter((line) => line.startsWith("Nodeplane screen:"));
  const thrown = () =>
    errors.mock.calls.flat().filter((value): value is ManifestFault => value instanceof ManifestFault);
  return { ...view, faultLogs, thrown };
}

// Rendering a screen takes seconds on a loaded two-core machine (vitest.config.ts).
const LOADED = { timeout: 10_000 };
const MISTAKE = "This screen's manifest has a mistake";

describe("a pointer the answer does not carry, in development and tests", () => {
  it("throws a ManifestFault for a list column, shown by the screen's boundary with the screen, pointer and operation", async () => {
    const rendered = renderScreen(
      brokenList((view) => {
        view.columns[0].field = "/prettyNmae";
      }),
    );
    const message =
      "Screen endpoints.list: The field /prettyNmae reads '/prettyNmae', which the answer of Endpoints does not have";
    await waitFor(() => expect(screen.getByText(MISTAKE)).toBeTruthy(), LOADED);
    expect(screen.getByText(message)).toBeTruthy();
    expect(rendered.thrown().map((fault) => fault.message)).toContain(message);
  });

  it("throws for a list's rows path", async () => {
    renderScreen(
      brokenList((view) => {
        view.rows = "endpoints.edgez[].node";
      }),
    );
    await waitFor(
      () =>
        expect(
          screen.getByText(
            "Screen endpoints.list: The path endpoints.edgez[].node reads 'endpoints.edgez', which the answer of Endpoints does not have",
          ),
        ).toBeTruthy(),
      LOADED,
    );
  });

  it("throws for a detail field", async () => {
    renderScreen(brokenDetail("/stauts"));
    await waitFor(
      () =>
        expect(
          screen.getByText(
            "Screen endpoints.detail: The field /stauts reads '/stauts', which the answer of Endpoint does not have",
          ),
        ).toBeTruthy(),
      LOADED,
    );
  });

  it("throws for a chart's encode pointer and for its rows", async () => {
    renderScreen(
      brokenChart((view) => {
        view.series[0].encode.y = "/vaule";
      }),
    );
    await waitFor(
      () =>
        expect(
          screen.getByText(
            "Screen usage.overview: The chart's encode /vaule reads '/vaule', which the answer of UsageOverview does not have",
          ),
        ).toBeTruthy(),
      LOADED,
    );
    cleanup();
    renderScreen(
      brokenChart((view) => {
        view.series[0].rows = "usage.usagePointz";
      }),
    );
    await waitFor(
      () =>
        expect(
          screen.getByText(
            "Screen usage.overview: The chart's rows usage.usagePointz reads 'usage.usagePointz', which the answer of UsageOverview does not have",
          ),
        ).toBeTruthy(),
      LOADED,
    );
  });

  it("leaves a screen whose pointers the answer carries as it was", async () => {
    const rendered = renderScreen(manifestOf("endpoints.list"));
    const label = getPointer(
      (getPath(recordedResponses.Endpoints.data, "endpoints.edges[].node") as unknown[])[0],
      "/label",
    );
    await waitFor(() => expect(screen.getAllByText(String(label)).length).toBeGreaterThan(0), LOADED);
    expect(screen.queryByText(MISTAKE)).toBeNull();
    expect(rendered.container.querySelector("[data-manifest-fault]")).toBeNull();
    expect(rendered.thrown()).toEqual([]);
  });
});

describe("a pointer the answer does not carry, in production", () => {
  it("shows a placeholder in every cell it reaches and logs once per screen and pointer, across renders", async () => {
    vi.stubEnv("DEV", false);
    const manifest = brokenList((view) => {
      view.columns[0].field = "/labelz";
    });
    const first = renderScreen(manifest);
    // Two recorded endpoints: two cells, each with the placeholder; the rest of the screen as it was.
    await waitFor(() => expect(screen.getAllByText("Missing /labelz")).toHaveLength(2), LOADED);
    expect(first.container.querySelectorAll("[data-manifest-fault]")).toHaveLength(2);
    expect(screen.queryByText(MISTAKE)).toBeNull();
    expect(first.thrown()).toEqual([]);
    expect(first.faultLogs()).toEqual([
      "Nodeplane screen: Screen endpoints.list: The field /labelz reads '/labelz', which the answer of Endpoints does not have",
    ]);
    cleanup();
    const again = renderScreen(manifest);
    await waitFor(() => expect(screen.getAllByText("Missing /labelz")).toHaveLength(2), LOADED);
    expect(again.faultLogs()).toEqual([]);
  });

  it("shows a placeholder for a list's rows path, a detail field and a chart's encode, each logged once", async () => {
    vi.stubEnv("DEV", false);
    const rows = renderScreen(
      brokenList((view) => {
        view.rows = "endpoints.edges[].nodez";
      }),
    );
    await waitFor(() => expect(screen.getByText("Missing endpoints.edges[].nodez")).toBeTruthy(), LOADED);
    expect(rows.faultLogs()).toEqual([
      "Nodeplane screen: Screen endpoints.list: The path endpoints.edges[].nodez reads 'endpoints.edges[].nodez', which the answer of Endpoints does not have",
    ]);
    cleanup();

    const detail = renderScreen(brokenDetail("/chainz"));
    await waitFor(() => expect(screen.getByText("Missing /chainz")).toBeTruthy(), LOADED);
    expect(detail.faultLogs()).toEqual([
      "Nodeplane screen: Screen endpoints.detail: The field /chainz reads '/chainz', which the answer of Endpoint does not have",
    ]);
    cleanup();

    const chart = renderScreen(
      brokenChart((view) => {
        view.series[0].encode.series = "/nmae";
      }),
    );
    await waitFor(() => expect(screen.getByText("Missing /nmae")).toBeTruthy(), LOADED);
    expect(chart.container.querySelector('[data-view="chart"] [data-manifest-fault]')).not.toBeNull();
    expect(chart.faultLogs()).toEqual([
      "Nodeplane screen: Screen usage.overview: The chart's encode /nmae reads '/nmae', which the answer of UsageOverview does not have",
    ]);
  });
});
