// @vitest-environment jsdom
// A widget the renderer does not know fails loudly in development and tests, naming it, and
// shows a visible placeholder (and a console error) in production, never a quiet plain or empty cell.
import { cleanup, render, screen } from "@testing-library/react";
import { Component, type ReactNode } from "react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { failsLoudly, ManifestFault } from "../../../renderer/faults.tsx";
import type { Field } from "../../../renderer/types.ts";
import { FieldValue } from "../../../renderer/views/FieldValue.tsx";
import { fixtureTransport, installDomStandIns, registryFor, withDataProviders } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(() => {
  cleanup();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** Keeps what a subtree threw, as the console's own error overlay would show it. */
class Caught extends Component<{ children: ReactNode; onError: (error: Error) => void }, { failed: boolean }> {
  override state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  override componentDidCatch(error: Error) {
    this.props.onError(error);
  }
  override render() {
    return this.state.failed ? <p>failed</p> : this.props.children;
  }
}

const registry = registryFor("owner");
const record = { label: "Mainnet node", status: "ACTIVE" };

function renderField(field: Field) {
  const caught: Error[] = [];
  const errors = vi.spyOn(console, "error").mockImplementation(() => {});
  errors.mockClear();
  render(
    withDataProviders(
      <Caught onError={(error) => caught.push(error)}>
        <FieldValue field={field} record={record} scope={{}} />
      </Caught>,
      fixtureTransport(),
      registry,
    ),
  );
  return { caught, logged: errors.mock.calls.map((call) => call.join(" ")) };
}

describe("a manifest fault while rendering", () => {
  it("fails loudly under tests (Vitest's DEV), as in development", () => {
    expect(failsLoudly()).toBe(true);
  });

  it("throws on an unknown widget in development and tests, naming it", () => {
    const { caught } = renderField({ field: "/label", widget: "sparkline" as Field["widget"] });
    expect(caught).toHaveLength(1);
    expect(caught[0]).toBeInstanceOf(ManifestFault);
    expect(caught[0].message).toBe("Unknown widget 'sparkline' for the field /label");
  });

  it("shows a known field and widget as before", () => {
    const { caught } = renderField({ field: "/label", widget: "text" });
    expect(caught).toEqual([]);
    expect(screen.getByText("Mainnet node")).toBeTruthy();
  });

  it("in production shows a visible placeholder with the name and logs it", () => {
    vi.stubEnv("DEV", false);
    expect(failsLoudly()).toBe(false);
    const widget = renderField({ field: "/label", widget: "sparkline" as Field["widget"] });
    expect(widget.caught).toEqual([]);
    expect(screen.getByText("Unknown widget 'sparkline' for the field /label")).toBeTruthy();
    expect(widget.logged).toEqual(["Nodeplane screen: Unknown widget 'sparkline' for the field /label"]);
  });
});
