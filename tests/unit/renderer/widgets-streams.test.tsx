// @vitest-environment jsdom
// The stream widgets against recorded service responses: the filter tester (templates, latest block,
// a run and its result, size, duration and coloured logs; a chain that cannot be read; a VIEWER), the
// raw payload, and the create form's destination settings following the destination type.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { FeedbackProvider } from "../../../renderer/feedback.tsx";
import { SchemaForm } from "../../../renderer/form/SchemaForm.tsx";
import { GqlError, type Transport } from "../../../renderer/index.ts";
import { resolveSchemaRef } from "../../../renderer/schema.ts";
import { testInput } from "../../../src/widgets/stream-filter-tester.tsx";
import {
  fixtureTransport,
  installDomStandIns,
  recordedResponses,
  registryFor,
  renderRoute,
  viewerFor,
} from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const registry = registryFor("owner");
/** The recorded `data` of a named operation. */
const recorded = <T,>(name: string) => recordedResponses[name]?.data as T;
const STREAM_ID = recorded<{ stream: { id: string } }>("Stream").stream.id;

function filterRoute(options: { transport?: Transport; role?: "OWNER" | "VIEWER" } = {}) {
  return renderRoute(`/streams/${STREAM_ID}/filter`, {
    registry,
    viewer: viewerFor(options.role ?? "OWNER"),
    transport: options.transport,
  });
}

describe("stream-filter-tester", () => {
  it("fills the block from the chain tip, runs the filter and shows the result, size, duration and logs", async () => {
    const calls: { name: string; variables?: Record<string, unknown> }[] = [];
    const { container } = render(filterRoute({ transport: fixtureTransport(calls) }));
    const latest = recorded<{ streamLatestBlock: number }>("StreamLatestBlock").streamLatestBlock;
    const block = await screen.findByLabelText("Block number", {}, { timeout: 10_000 });
    await waitFor(() => expect((block as HTMLInputElement).value).toBe(String(latest)), { timeout: 10_000 });
    expect(calls.find((c) => c.name === "StreamFilterTemplates")?.variables).toEqual({ network: "ethereum-mainnet" });

    fireEvent.click(screen.getByRole("button", { name: "Run" }));
    await waitFor(() => expect(container.querySelector("[data-testid=json-result]")).not.toBeNull());
    const run = calls.find((c) => c.name === "TestFilterFunction");
    expect(run?.variables?.input).toMatchObject({
      network: "ethereum-mainnet",
      dataset: "BLOCK",
      blockNumber: latest,
      batchSize: 1,
      filterVersion: "V5",
    });
    const { size } = recorded<{ testFilterFunction: { size: number } }>("TestFilterFunction").testFilterFunction;
    expect(screen.getByText(`${size} B`)).toBeTruthy();
    expect(screen.getByText(/ ms$/)).toBeTruthy();
    expect(container.querySelector('[data-level="INFO"]')?.textContent).toContain("blocks in batch 2");
    expect(container.querySelector('[data-level="WARNING"]')?.textContent).toContain("more than one block");
  }, 30_000);

  it("says plainly when the chain cannot be read", async () => {
    const base = fixtureTransport();
    const transport: Transport = async (document, variables) => {
      if (/StreamLatestBlock/.test(document))
        throw new GqlError("No chain node is connected to this service, so blocks cannot be read.", "UPSTREAM_FAILED");
      return base(document, variables);
    };
    render(filterRoute({ transport }));
    expect(await screen.findByText("Cannot read the chain", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getAllByText(/No chain node is connected/).length).toBeGreaterThan(0);
    expect(screen.getByRole("button", { name: "Run" }).hasAttribute("disabled")).toBe(true);
  }, 30_000);

  it("shows the filter's error kind and message", async () => {
    const base = fixtureTransport();
    const transport: Transport = async (document, variables) => {
      if (/TestFilterFunction/.test(document))
        return {
          testFilterFunction: {
            result: null,
            logs: [{ level: "ERROR", message: "boom" }],
            size: 0,
            durationMs: 1,
            error: "RUNTIME_ERROR: x is not defined",
          },
        };
      return base(document, variables);
    };
    const { container } = render(filterRoute({ transport }));
    const block = (await screen.findByLabelText("Block number", {}, { timeout: 10_000 })) as HTMLInputElement;
    await waitFor(() => expect(block.value).not.toBe(""), { timeout: 10_000 });
    fireEvent.click(screen.getByRole("button", { name: "Run" }));
    expect(await screen.findByText("The filter failed", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getByText("RUNTIME_ERROR: x is not defined")).toBeTruthy();
    expect(container.querySelector('[data-level="ERROR"]')?.textContent).toContain("boom");
  }, 30_000);

  it("lets a VIEWER read but not run or save", async () => {
    render(filterRoute({ role: "VIEWER" }));
    expect(
      await screen.findByText("Testing and saving a filter needs the Admin role.", {}, { timeout: 10_000 }),
    ).toBeTruthy();
    expect(screen.getByRole("button", { name: "Run" }).hasAttribute("disabled")).toBe(true);
    expect(screen.getByRole("button", { name: "Save filter" }).hasAttribute("disabled")).toBe(true);
  }, 30_000);

  it("sends only what the API takes: webhooks have no dataset, version or batch size", () => {
    const state = { network: "n", dataset: "LOGS", version: "V2", blockNumber: 7, batchSize: 3, code: "x" };
    expect(testInput(state, {})).toEqual({ network: "n", blockNumber: 7, filterFunction: "x" });
    expect(testInput(state, { withDataset: true, withVersion: true, withBatchSize: true })).toEqual({
      network: "n",
      blockNumber: 7,
      filterFunction: "x",
      dataset: "LOGS",
      filterVersion: "V2",
      batchSize: 3,
    });
  });
});

describe("stream create form", () => {
  const schema = resolveSchemaRef(registry.schemas, "stream#/$defs/createInput");
  const form = (destination: string) => (
    <FeedbackProvider>
      <SchemaForm
        schema={schema}
        formData={{ name: "s", network: "ethereum-mainnet", dataset: "BLOCK", startRange: 1, destination }}
        onChange={() => {}}
        onSubmit={() => {}}
      />
    </FeedbackProvider>
  );

  it("shows the destination's own settings when the destination type changes", async () => {
    const { rerender } = render(form("POSTGRES"));
    await waitFor(() => expect(screen.getByLabelText(/^Host/)).toBeTruthy());
    expect(screen.getByLabelText(/^Table/)).toBeTruthy();
    expect(screen.queryByLabelText(/^URL/)).toBeNull();

    rerender(form("WEBHOOK"));
    await waitFor(() => expect(screen.getByLabelText(/^URL/)).toBeTruthy());
    expect(screen.getByLabelText(/^Security token/)).toBeTruthy();
    expect(screen.queryByLabelText(/^Host/)).toBeNull();

    rerender(form("S3"));
    await waitFor(() => expect(screen.getByLabelText(/^Bucket/)).toBeTruthy());
    expect(screen.getByLabelText(/^Secret key/)).toBeTruthy();
    expect(screen.queryByLabelText(/^URL/)).toBeNull();
  }, 30_000);
});

describe("stream-start-block", () => {
  const schema = resolveSchemaRef(registry.schemas, "webhook#/$defs/createInput");
  it("offers the chain tip (-1) or a block number, which typing one chooses", async () => {
    const changes: Record<string, unknown>[] = [];
    const form = (data: Record<string, unknown>) => (
      <FeedbackProvider>
        <SchemaForm
          schema={schema}
          uiSchema={{ startRange: { "ui:widget": "stream-start-block" } }}
          formData={data}
          onChange={(next) => changes.push(next)}
          onSubmit={() => {}}
        />
      </FeedbackProvider>
    );
    const { rerender } = render(form({ startRange: -1 }));
    const latest = (await screen.findByRole("checkbox", { name: /Latest block/ })) as HTMLInputElement;
    expect(latest.checked).toBe(true);
    fireEvent.click(latest);
    await waitFor(() => expect(changes.at(-1)?.startRange).toBeUndefined());
    rerender(form({ startRange: 42 }));
    await waitFor(() => expect((screen.getByLabelText(/^Start block/) as HTMLInputElement).value).toBe("42"));
    expect((screen.getByRole("checkbox", { name: /Latest block/ }) as HTMLInputElement).checked).toBe(false);
    // Typing a block number while the tip is ticked chooses that block, in one step.
    cleanup();
    render(form({ startRange: -1 }));
    const number = (await screen.findByLabelText(/^Start block/)) as HTMLInputElement;
    expect(number.value).toBe("");
    fireEvent.change(number, { target: { value: "7" } });
    await waitFor(() => expect(changes.at(-1)?.startRange).toBe(7));
  }, 30_000);
});
