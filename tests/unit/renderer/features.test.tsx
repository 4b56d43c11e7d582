// @vitest-environment jsdom
// The generic features screens build on: list state in the URL (token and cursor paging with a
// back stack, time ranges, typed filters), templates with scope references, the page heading of a
// record page, and the json, secret-once, code-editor and runner widgets.

import { ErrorSchemaBuilder } from "@rjsf/utils";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { type ReactElement, type ReactNode, useState } from "react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Actions } from "../../../renderer/actions.tsx";
import { FeedbackProvider } from "../../../renderer/feedback.tsx";
import { GqlError, type Transport } from "../../../renderer/index.ts";
import { fillTemplate } from "../../../renderer/resolve.ts";
import { headingView, menuEntryFor } from "../../../renderer/screens.tsx";
import type { Action, ListView, Manifest, Registry } from "../../../renderer/types.ts";
import { CustomView } from "../../../renderer/views/CustomView.tsx";
import { FormView } from "../../../renderer/views/FormView.tsx";
import { ListView as ListViewComponent } from "../../../renderer/views/ListView.tsx";
import {
  hasPreviousPage,
  listVariables,
  nextPageParams,
  nextPosition,
  pagingPlan,
  previousPageParams,
  rangeChoice,
} from "../../../renderer/views/listState.ts";
import { outputWidget } from "../../../renderer/views/RunnerView.tsx";
import { presetLabel, rangeBounds } from "../../../renderer/views/rangeState.ts";
import { prettyJson } from "../../../renderer/widgets/json.tsx";
import { getWidget } from "../../../renderer/widgets/registry.ts";
import { indentEdit } from "../../../src/widgets/code-editor.tsx";
import {
  fixtureTransport,
  installDomStandIns,
  registryFor,
  renderRoute,
  routeFor,
  viewerFor,
  withDataProviders,
} from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const tokenList: ListView = {
  kind: "list",
  query: "Logs",
  rows: "logs.items",
  columns: [{ field: "/id" }],
  variables: { ownerId: "$route.ownerId" },
  paging: { mode: "token", size: "limit", token: "nextAt", next: "logs.nextAt", pageSize: 50 },
  timeRange: { from: "from", to: "to" },
  filters: [{ variable: "pastDay", label: "Range", options: [{ value: true, label: "Past day" }] }],
};

describe("list state in the URL", () => {
  it("token paging: size and token variables, the next token from the result", () => {
    const plan = pagingPlan(tokenList);
    expect(plan).toMatchObject({ size: "limit", position: "nextAt", next: "logs.nextAt" });
    const now = Date.parse("2026-01-02T00:00:00Z");
    const variables = listVariables(tokenList, { route: { ownerId: "o1" } }, new URLSearchParams("nextAt=t2"), now);
    expect(variables).toMatchObject({ ownerId: "o1", limit: 50, nextAt: "t2" });
    expect(nextPosition(plan as NonNullable<typeof plan>, { logs: { nextAt: "t3" } })).toBe("t3");
    expect(nextPosition(plan as NonNullable<typeof plan>, { logs: { nextAt: null } })).toBeNull();
  });

  it("cursor paging honours hasNextPage", () => {
    const view: ListView = {
      ...tokenList,
      paging: {
        first: "first",
        after: "after",
        endCursor: "things.pageInfo.endCursor",
        hasNextPage: "things.pageInfo.hasNextPage",
      },
    };
    const plan = pagingPlan(view) as NonNullable<ReturnType<typeof pagingPlan>>;
    expect(nextPosition(plan, { things: { pageInfo: { endCursor: "c", hasNextPage: false } } })).toBeNull();
    expect(nextPosition(plan, { things: { pageInfo: { endCursor: "c", hasNextPage: true } } })).toBe("c");
  });

  it("Next pushes the current position on a back stack in the URL, Previous pops it", () => {
    let params = new URLSearchParams("search=x");
    expect(hasPreviousPage(tokenList, params)).toBe(false);
    params = nextPageParams(tokenList, params, "t2");
    params = nextPageParams(tokenList, params, "t3");
    expect(params.get("nextAt")).toBe("t3");
    expect(params.getAll("back")).toEqual(["", "t2"]);
    // A reload keeps the URL, so Previous still works.
    const reloaded = new URLSearchParams(params.toString());
    expect(hasPreviousPage(tokenList, reloaded)).toBe(true);
    params = previousPageParams(tokenList, reloaded);
    expect(params.get("nextAt")).toBe("t2");
    params = previousPageParams(tokenList, params);
    expect(params.get("nextAt")).toBeNull();
    expect(params.getAll("back")).toEqual([]);
    expect(params.get("search")).toBe("x");
  });

  it("a view with an id prefixes its URL parameters", () => {
    const view = { ...tokenList, id: "logs" };
    const params = nextPageParams(view, new URLSearchParams(), "t2");
    expect(params.get("logs.nextAt")).toBe("t2");
    expect(listVariables(view, {}, params).nextAt).toBe("t2");
  });

  it("time range: presets end now, a custom range is kept as from/to, the default is 24h", () => {
    const now = Date.parse("2026-01-02T00:00:00Z");
    expect(rangeChoice(tokenList, new URLSearchParams())).toEqual({ preset: "24h" });
    expect(listVariables(tokenList, {}, new URLSearchParams("range=1h"), now)).toMatchObject({
      from: "2026-01-01T23:00:00.000Z",
      to: "2026-01-02T00:00:00.000Z",
    });
    expect(listVariables(tokenList, {}, new URLSearchParams("range=15m"), now).from).toBe("2026-01-01T23:45:00.000Z");
    const custom = new URLSearchParams("from=2025-12-01T00:00:00Z&to=2025-12-02T00:00:00Z");
    expect(rangeChoice(tokenList, custom)).toEqual({ from: "2025-12-01T00:00:00Z", to: "2025-12-02T00:00:00Z" });
    expect(rangeBounds({ preset: "7d" }, now)?.from).toBe("2025-12-26T00:00:00.000Z");
    // A preset the manifest does not offer falls back to the default.
    expect(
      rangeChoice(
        { ...tokenList, timeRange: { from: "from", to: "to", presets: ["1h"] } },
        new URLSearchParams("range=7d"),
      ),
    ).toEqual({ preset: "1h" });
    expect(presetLabel("1h")).toBe("Last hour");
    expect(presetLabel("24h")).toBe("Last 24 hours");
    expect(presetLabel("15m")).toBe("Last 15 minutes");
  });

  it("static filter options keep their type (a boolean stays a boolean)", () => {
    expect(listVariables(tokenList, {}, new URLSearchParams("pastDay=true")).pastDay).toBe(true);
  });
});

describe("templates and headings", () => {
  it("a template may read the scope with {$route.x}", () => {
    expect(
      fillTemplate("/things/{$route.thingId}/logs/{requestId}", { requestId: "r 1" }, true, {
        route: { thingId: "t1" },
      }),
    ).toBe("/things/t1/logs/r%201");
  });

  it("a record page (route with parameters) takes its heading from its first titled detail view", () => {
    const detail = { kind: "detail" as const, query: "Thing", record: "thing", title: "{label}", sections: [] };
    const page: Manifest = { version: 1, id: "things.detail", route: "/things/:id", title: "Thing", views: [detail] };
    expect(headingView(page)).toBe(detail);
    expect(headingView({ ...page, route: "/" })).toBeUndefined();
  });

  it("the side menu marks the screen the router shows, not the longest route that matches", () => {
    const screenAt = (id: string, route: string, nav: Manifest["nav"]): Manifest => ({
      version: 1,
      id,
      route,
      title: id,
      nav,
      views: [],
    });
    const screens = [
      screenAt("things.list", "/things", { section: "Data", label: "Things" }),
      screenAt("things.quick", "/things/quick", { section: "Data", label: "Quick thing" }),
      screenAt("things.detail", "/things/:thingId", { hidden: true, parent: "things.list" }),
      screenAt("things.logs", "/things/:thingId/logs", { parent: "things.detail", tab: "Logs" }),
    ];
    expect(menuEntryFor("/things/quick", screens)).toBe("things.quick");
    expect(menuEntryFor("/things/t1", screens)).toBe("things.list");
    expect(menuEntryFor("/things/t1/logs", screens)).toBe("things.list");
    expect(menuEntryFor("/elsewhere", screens)).toBeUndefined();
  });

  it("a menu screen that names its own tab (nav.tab) shows its tabs too, so they are reachable from the menu", async () => {
    const registry = registryFor("owner");
    const profile = registry.screens.find((manifest) => manifest.id === "account.profile") as Manifest;
    expect(profile.nav && "tab" in profile.nav && "section" in profile.nav).toBe(true);
    render(renderRoute(routeFor(profile), { registry, viewer: viewerFor("OWNER") }));
    const tabs = await screen.findByRole("navigation", { name: /sections$/ }, { timeout: 10_000 });
    expect([...tabs.querySelectorAll("a")].map((link) => [link.textContent, link.getAttribute("href")])).toEqual([
      ["Profile", "/account"],
      ["Team", "/account/team"],
      ["API keys", "/account/api-keys"],
      ["REST API", "/account/rest-api"],
    ]);
  });

  it("a record found no more (deleted, then back) is not named in the heading from the cached answer", async () => {
    const registry = registryFor("owner");
    const detail = registry.screens.find((manifest) => manifest.id === "streams.detail") as Manifest;
    const recorded = fixtureTransport();
    let deleted = false;
    const transport: Transport = async (document, variables) => {
      if (deleted && document.startsWith("# operation Stream\n"))
        throw new GqlError("Stream was not found.", "NOT_FOUND");
      return recorded(document, variables);
    };
    let router: Parameters<NonNullable<Parameters<typeof renderRoute>[1]["onRouter"]>>[0] | undefined;
    render(
      renderRoute(routeFor(detail), {
        registry,
        viewer: viewerFor("OWNER"),
        transport,
        history: ["/streams"],
        onRouter: (created) => {
          router = created;
        },
      }),
    );
    const heading = await screen.findByRole("heading", { level: 1 }, { timeout: 10_000 });
    await waitFor(() => expect(heading.textContent).not.toBe(detail.title));
    const name = heading.textContent;
    deleted = true;
    await act(() => router?.navigate(-1));
    await act(() => router?.navigate(1));
    await screen.findByText("Not found", undefined, { timeout: 10_000 });
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe(detail.title);
    expect(document.body.textContent).not.toContain(name);
  });

  it("a tab shows its own description under the tabs, the root's stays in the header", async () => {
    const registry = registryFor("owner");
    const code = registry.screens.find((manifest) => manifest.id === "functions.code") as Manifest;
    expect(code.description).toBeTruthy();
    render(renderRoute(routeFor(code), { registry, viewer: viewerFor("OWNER") }));
    expect((await screen.findByText(code.description as string)).className).toContain("np-tab-description");
  });
});

describe("remote options with descriptions", () => {
  it("each option says what it does in the list, and the chosen one's text shows under the field", async () => {
    const registry = registryFor("owner");
    const quick = registry.screens.find((manifest) => manifest.id === "functions.quick") as Manifest;
    const { container } = render(renderRoute(routeFor(quick), { registry, viewer: viewerFor("OWNER") }));
    const described = "Returns the user_data it was called with, and logs it. A start for functions called over HTTP.";
    const input = await waitFor(() => {
      const found = container.querySelector<HTMLInputElement>("input[id$=templateId]");
      if (!found) throw new Error("no Template field yet");
      return found;
    });
    expect(container.querySelector("[data-chosen-description]")).toBeNull();
    fireEvent.mouseDown(input);
    fireEvent.click(await screen.findByText(described, { selector: ".np-option-description" }));
    await waitFor(() => expect(container.querySelector("[data-chosen-description]")?.textContent).toBe(described));
    // The source's pointer is the widget's to read, never shown as the field's own description by rjsf.
    expect(container.textContent).not.toContain("/description");
  });
});

describe("remote options that need an earlier choice", () => {
  it("stay disabled and say what to choose first until it is made, then offer its options", async () => {
    const registry = registryFor("owner");
    const create = registry.screens.find((manifest) => manifest.id === "streams.create") as Manifest;
    const { container } = render(renderRoute(routeFor(create), { registry, viewer: viewerFor("OWNER") }));
    const field = (id: string) =>
      waitFor(() => {
        const found = container.querySelector<HTMLInputElement>(`input[id$=${id}]`);
        if (!found) throw new Error(`no ${id} field yet`);
        return found;
      });
    const dataset = await field("dataset");
    const datasetSelect = () => dataset.closest(".ant-select") as HTMLElement;
    expect(datasetSelect().className).toContain("ant-select-disabled");
    expect(datasetSelect().textContent).toContain("Choose the network first");
    fireEvent.mouseDown(await field("network"));
    fireEvent.click(await screen.findByText("Ethereum Mainnet", { selector: ".ant-select-item-option *" }));
    await waitFor(() => expect(datasetSelect().className).not.toContain("ant-select-disabled"));
    expect(datasetSelect().textContent).toContain("Choose a dataset");
    fireEvent.mouseDown(dataset);
    expect(await screen.findByText("Block with receipts", { selector: ".ant-select-item-option *" })).toBeTruthy();
  });
});

describe("widgets", () => {
  it("json pretty-prints values and JSON held in strings", () => {
    expect(prettyJson({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(prettyJson('{"jsonrpc":"2.0"}')).toBe('{\n  "jsonrpc": "2.0"\n}');
    expect(prettyJson("not json")).toBe("not json");
  });

  it("json collapses a long value and expands on request", () => {
    const Read = getWidget("json")?.read;
    if (!Read) throw new Error("json is not registered");
    const value = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`key${index}`, index]));
    const { container } = render(<Read value={value} options={{}} />);
    expect(container.textContent).not.toContain("key29");
    fireEvent.click(screen.getByRole("button", { name: "Expand" }));
    expect(container.textContent).toContain("key29");
    expect(screen.getByRole("button", { name: "Copy JSON" })).toBeTruthy();
  });

  it("json counts the lines a text shows: a closing line break starts none", () => {
    const Read = getWidget("json")?.read;
    if (!Read) throw new Error("json is not registered");
    const { container } = render(<Read value={"function main() {\n  return 1;\n}\n"} options={{}} />);
    expect(container.textContent).toContain("3 lines");
  });

  it("boolean: an outcome's false reads as a failure, any other false as a plain no", () => {
    const Read = getWidget("boolean")?.read;
    if (!Read) throw new Error("boolean is not registered");
    const labels = ["Success", "Failed"];
    const { container, rerender } = render(<Read value={false} options={{ labels, outcome: true }} />);
    expect(container.textContent).toBe("Failed");
    expect(container.querySelector("[data-outcome=failed] .anticon-close-circle")).not.toBeNull();
    rerender(<Read value={false} options={{ labels }} />);
    expect(container.querySelector("[data-outcome=failed]")).toBeNull();
    expect(container.querySelector(".anticon-minus-circle")).not.toBeNull();
  });

  it("code and text copy their value, never a masked one", () => {
    const Code = getWidget("code")?.read;
    const Text = getWidget("text")?.read;
    if (!Code || !Text) throw new Error("code or text is not registered");
    const button = (element: ReactElement) => render(element).container.querySelector("button");
    expect(button(<Code value="https://rpc.example/abc" options={{}} />)?.getAttribute("aria-label")).toBe("Copy");
    expect(button(<Code value={`np_ab${"•".repeat(8)}`} options={{}} />)).toBeNull();
    expect(button(<Text value={`np_ab${"•".repeat(8)}`} copy options={{}} />)).toBeNull();
    expect(button(<Code value="0xabc" copy={false} options={{}} />)).toBeNull();
  });

  it("code, links and long text carry their whole value in a title, and long text takes focus, for cells that cut them", () => {
    const read = (name: string) => {
      const Read = getWidget(name)?.read;
      if (!Read) throw new Error(`${name} is not registered`);
      return Read;
    };
    const Code = read("code");
    const Link = read("link");
    const Text = read("text");
    const long = "Rate limited: the plan allows 25 requests a second and this endpoint sent more than that";
    const code = render(<Code value="0xabcdef0123456789" options={{ maxChars: 6 }} />).container;
    expect(code.querySelector("code")?.getAttribute("title")).toBe("0xabcdef0123456789");
    const link = render(<Link value="https://rpc.example/abc" options={{}} />).container;
    expect(link.querySelector("code")?.getAttribute("title")).toBe("https://rpc.example/abc");
    const text = render(<Text value={long} options={{}} />).container.querySelector(".np-text-value");
    expect(text?.getAttribute("title")).toBe(long);
    expect(text?.getAttribute("tabindex")).toBe("0");
    const short = render(<Text value="Paused" options={{}} />).container.querySelector(".np-text-value");
    expect(short?.getAttribute("title")).toBeNull();
    expect(short?.getAttribute("tabindex")).toBeNull();
  });

  it("link: with `text`, reads as its words filled from the row, the address in its title and copy button", () => {
    const Link = getWidget("link")?.read;
    if (!Link) throw new Error("link is not registered");
    const href = "https://console.example/invoices/in-1.pdf";
    const cell = render(<Link value={href} options={{ text: "PDF of {number}" }} record={{ number: "NP-0001" }} />);
    const anchor = within(cell.container).getByRole("link", { name: "PDF of NP-0001" });
    expect(anchor.getAttribute("href")).toBe(href);
    expect(anchor.getAttribute("title")).toBe(href);
    expect(within(cell.container).getByRole("button", { name: /copy/i })).toBeTruthy();
    // An address that is not http(s) is never made a link, whatever the words.
    const unsafe = render(
      <Link value="javascript:alert(1)" options={{ text: "PDF of {number}" }} record={{ number: "NP-0002" }} />,
    );
    expect(unsafe.container.querySelector("a")).toBeNull();
    expect(unsafe.container.textContent).toContain("javascript:alert(1)");
  });

  it("code-editor: Tab indents, Shift+Tab outdents the selected lines", () => {
    expect(indentEdit("ab", 1, 1, false)).toEqual({ text: "a  b", start: 3, end: 3 });
    const block = indentEdit("one\ntwo", 0, 7, false);
    expect(block.text).toBe("  one\n  two");
    expect(indentEdit(block.text, 0, block.text.length, true).text).toBe("one\ntwo");
  });

  it("tags show method names and labels as they are, and enum values by their labels", () => {
    const Tags = getWidget("tags")?.read;
    const Status = getWidget("status")?.read;
    if (!Tags || !Status) throw new Error("tags or status is not registered");
    const methods = render(<Tags value={["eth_call", "prod-eu"]} options={{}} />);
    expect(methods.container.textContent).toBe("eth_callprod-eu");
    const kinds = { type: "array", items: { enum: ["NODEJS", "GO"], "x-enumLabels": { NODEJS: "Node.js" } } };
    const labelled = render(<Tags value={["NODEJS", "GO"]} schema={kinds} options={{}} />);
    expect(labelled.container.textContent).toBe("Node.jsGo");
    const region = { enum: ["USA_EAST"], "x-enumLabels": { USA_EAST: "USA East" } };
    expect(render(<Status value="USA_EAST" schema={region} options={{}} />).container.textContent).toBe("USA East");
  });

  it("tags show repeated items each once per copy, coloured by a tone field when named", () => {
    const Tags = getWidget("tags")?.read;
    if (!Tags) throw new Error("tags is not registered");
    const warnings = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const lines = [
        { level: "INFO", message: "tick" },
        { level: "INFO", message: "tick" },
        { level: "ERROR", message: "bad thing" },
      ];
      const { container } = render(<Tags value={lines} options={{ labelKey: "message", toneKey: "level" }} />);
      expect([...container.querySelectorAll(".ant-tag")].map((tag) => tag.textContent)).toEqual([
        "tick",
        "tick",
        "bad thing",
      ]);
      expect(container.querySelectorAll(".ant-tag-red")).toHaveLength(1);
      expect(warnings.mock.calls.flat().join(" ")).not.toMatch(/same key/);
    } finally {
      warnings.mockRestore();
    }
  });

  it("runner outputs default to json for objects and number for numbers", () => {
    expect(outputWidget({ path: "a" }, { x: 1 })).toBe("json");
    expect(outputWidget({ path: "a" }, 3)).toBe("number");
    expect(outputWidget({ path: "a", widget: "tags" }, [])).toBe("tags");
  });
});

const registry: Registry = registryFor("owner");

function withData(children: ReactNode, transport: Transport, role: "OWNER" | "VIEWER" = "OWNER") {
  const operations = {
    ...registry.operations,
    MakeSecret: "mutation MakeSecret { x }",
    Try: "query Try { x }",
    KeepIt: "mutation KeepIt { x }",
  };
  return withDataProviders(children, transport, { ...registry, operations }, role);
}

describe("an action shows a field of its result once", () => {
  it("secret-once: the value, a copy button and a warning, until the viewer confirms", async () => {
    const action: Action = {
      label: "Create key",
      mutation: "MakeSecret",
      showResult: { field: "/makeSecret/token", widget: "secret-once", title: "Your new key" },
    };
    render(withData(<Actions actions={[action]} scope={{}} />, async () => ({ makeSecret: { token: "sk_live_123" } })));
    fireEvent.click(screen.getByRole("button", { name: "Create key" }));
    await screen.findByText("Your new key");
    expect(screen.getByText("sk_live_123")).toBeTruthy();
    expect(screen.getByText(/will not be shown again/)).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "I have copied it" }));
    await waitFor(() => expect(screen.queryByText("sk_live_123")).toBeNull());
  });
});

describe("the runner custom view", () => {
  it("runs the named operation with the form's data and shows the named result paths", async () => {
    const calls: Record<string, unknown>[] = [];
    const transport: Transport = async (_document, variables) => {
      calls.push(variables ?? {});
      return { tryIt: { result: { matched: true }, logs: ["hello"], size: 42 } };
    };
    render(
      withData(
        <CustomView
          view={{
            kind: "custom",
            widget: "runner",
            options: {
              query: "Try",
              schema: "endpoint#/$defs/labelInput",
              variables: { label: "$form.label", id: "$route.id" },
              initial: { label: "first" },
              outputs: [
                { path: "tryIt.result", label: "Result" },
                { path: "tryIt.logs", label: "Logs", widget: "json" },
                { path: "tryIt.size", label: "Size", widget: "number", options: { unit: "bytes" } },
              ],
            },
          }}
          scope={{ route: { id: "r1" } }}
        />,
        transport,
      ),
    );
    fireEvent.click(await screen.findByRole("button", { name: "Run" }, { timeout: 10_000 }));
    await screen.findByText("42 bytes", undefined, { timeout: 10_000 });
    // The console's wait is named as such, not as a run time beside the run's own duration.
    expect(screen.getByText(/^Round trip: \d+ ms$/)).toBeTruthy();
    expect(calls[0]).toEqual({ label: "first", id: "r1" });
    expect(screen.getByText("Logs")).toBeTruthy();
    expect(document.body.textContent).toContain('"matched": true');
  }, 30_000);

  it("a save button keeps what the form holds through its own mutation; its field errors show on the form", async () => {
    const calls: { document: string; variables: Record<string, unknown> }[] = [];
    let refuse = true;
    const transport: Transport = async (document, variables) => {
      calls.push({ document, variables: variables ?? {} });
      if (document.includes("KeepIt") && refuse)
        throw new GqlError("Bad input", "BAD_USER_INPUT", [{ pointer: "/label", message: "Not this label." }]);
      return document.includes("KeepIt") ? { keepIt: { ok: true } } : { tryIt: { size: 1 } };
    };
    const runner = (
      <CustomView
        view={{
          kind: "custom",
          widget: "runner",
          options: {
            query: "Try",
            schema: "endpoint#/$defs/labelInput",
            variables: { label: "$form.label" },
            initial: { label: "first" },
            submitLabel: "Test",
            save: {
              label: "Keep",
              mutation: "KeepIt",
              variables: { input: { id: "$route.id", label: "$form.label" } },
              successMessage: "Kept",
            },
          },
        }}
        scope={{ route: { id: "r1" } }}
      />
    );
    render(withData(runner, transport));
    fireEvent.click(await screen.findByRole("button", { name: "Keep" }, { timeout: 10_000 }));
    await screen.findByText("Not this label.", undefined, { timeout: 10_000 });
    refuse = false;
    fireEvent.click(screen.getByRole("button", { name: "Keep" }));
    await screen.findByText("Kept", undefined, { timeout: 10_000 });
    expect(calls.filter((call) => call.document.includes("KeepIt")).map((call) => call.variables)).toEqual([
      { input: { id: "r1", label: "first" } },
      { input: { id: "r1", label: "first" } },
    ]);
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await waitFor(() => expect(calls.at(-1)?.variables).toEqual({ label: "first" }));
    cleanup();

    render(withData(runner, transport, "VIEWER"));
    const keep = await screen.findByRole("button", { name: "Keep" }, { timeout: 10_000 });
    expect((keep as HTMLButtonElement).disabled).toBe(true);
  }, 30_000);
});

describe("a list with token paging and a time range", () => {
  it("asks for the range and the page, and moves to the next token and back", async () => {
    const calls: Record<string, unknown>[] = [];
    const transport: Transport = async (_document, variables) => {
      calls.push(variables ?? {});
      const page = variables?.nextAt ? 2 : 1;
      return { logs: { items: [{ id: `row-${page}` }], nextAt: page === 1 ? "t2" : null } };
    };
    const view: ListView = { ...tokenList, query: "Try", variables: {}, filters: [] };
    render(withData(<ListViewComponent view={view} scope={{}} />, transport));
    await screen.findByText("row-1");
    expect(await screen.findByLabelText("Time range")).toBeTruthy();
    expect(calls[0]).toMatchObject({ limit: 50 });
    expect(Date.parse(String(calls[0].to)) - Date.parse(String(calls[0].from))).toBe(24 * 3600 * 1000);
    fireEvent.click(screen.getByRole("button", { name: "Next" }));
    await screen.findByText("row-2");
    expect(calls.at(-1)).toMatchObject({ nextAt: "t2" });
    expect((screen.getByRole("button", { name: "Next" }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Previous" }));
    await screen.findByText("row-1");
  }, 30_000);

  it("names each value's column on its cell, for the cards a phone draws the rows as", async () => {
    const transport: Transport = async () => ({ logs: { items: [{ id: "row-1" }], nextAt: null } });
    const view: ListView = { ...tokenList, query: "Try", variables: {}, filters: [] };
    render(withData(<ListViewComponent view={view} scope={{}} />, transport));
    const cell = (await screen.findByText("row-1")).closest("td");
    expect(cell?.getAttribute("data-label")).toBe(screen.getByRole("columnheader").textContent);
    expect(cell?.getAttribute("data-label")).toBeTruthy();
  }, 30_000);

  it("draws a filter as a button until it is opened, then its select, open", async () => {
    const transport: Transport = async () => ({ logs: { items: [{ id: "row-1" }], nextAt: null } });
    const view: ListView = { ...tokenList, query: "Try", variables: {}, timeRange: undefined };
    render(withData(<ListViewComponent view={view} scope={{}} />, transport));
    await screen.findByText("row-1");
    expect(screen.queryByRole("combobox", { name: "Range" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Range" }));
    const select = await screen.findByRole("combobox", { name: "Range" }, { timeout: 10_000 });
    expect(select.getAttribute("aria-expanded")).toBe("true");
    expect(await screen.findByText("Past day")).toBeTruthy();
  }, 30_000);
});

describe("a form view", () => {
  it("editing a record: an emptied field that may be null is sent as null, one that may not is required", async () => {
    const saved: Record<string, unknown>[] = [];
    const transport: Transport = async (document, variables) => {
      if (document.includes("Try"))
        return { record: { id: "f1", name: "Old", description: "Says what it does", code: "x", timeoutSec: 10 } };
      saved.push(variables ?? {});
      return { updateFunction: { id: "f1" } };
    };
    const { container } = render(
      withData(
        <FormView
          view={{
            kind: "form",
            mutation: "MakeSecret",
            schema: "function#/$defs/updateInput",
            initial: { query: "Try", record: "record" },
            uiSchema: { id: { "ui:widget": "hidden" }, code: { "ui:widget": "hidden" } },
            submit: { label: "Save" },
          }}
          scope={{}}
        />,
        transport,
      ),
    );
    const errors = () => [...container.querySelectorAll(".ant-form-item-explain-error")].map((e) => e.textContent);
    const description = await screen.findByLabelText(/Description/, undefined, { timeout: 10_000 });
    fireEvent.change(description, { target: { value: "" } });
    fireEvent.change(screen.getByLabelText(/Name/), { target: { value: "" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(errors()).toEqual(["This field is required"]));
    expect(saved).toEqual([]);
    fireEvent.change(screen.getByLabelText(/Name/), { target: { value: "New" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(saved[0]).toEqual({
      input: { id: "f1", name: "New", description: null, code: "x", timeoutSec: 10, memoryMb: 128 },
    });
  }, 30_000);
  it("editing a record: an emptied text field that takes no value is sent empty, clearing it", async () => {
    const saved: Record<string, unknown>[] = [];
    const transport: Transport = async (document, variables) => {
      if (document.includes("Try")) return { record: { userFullName: "Ada", telegramUsername: "ada_l" } };
      saved.push(variables ?? {});
      return { updateProfile: { id: "u1" } };
    };
    render(
      withData(
        <FormView
          view={{
            kind: "form",
            mutation: "MakeSecret",
            schema: "account#/$defs/profileInput",
            initial: { query: "Try", record: "record" },
            submit: { label: "Save" },
          }}
          scope={{}}
        />,
        transport,
      ),
    );
    const telegram = await screen.findByLabelText(/Telegram username/, undefined, { timeout: 10_000 });
    fireEvent.change(telegram, { target: { value: "" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(saved[0]).toEqual({ input: { userFullName: "Ada", telegramUsername: "" } });
  }, 30_000);

  it("fills hidden fields bound to the route before validation, and starts clean after a reset", async () => {
    const calls: Record<string, unknown>[] = [];
    const transport: Transport = async (_document, variables) => {
      calls.push(variables ?? {});
      return { updateRateLimiter: { id: "l1" } };
    };
    const { container } = render(
      withData(
        <FormView
          view={{
            kind: "form",
            mutation: "MakeSecret",
            schema: "rate-limiter#/$defs/updateInput",
            uiSchema: {
              endpointId: { "ui:widget": "hidden" },
              rateLimiterId: { "ui:widget": "hidden" },
              chain: { "ui:widget": "hidden" },
              network: { "ui:widget": "hidden" },
              methods: { "ui:widget": "tags-input" },
            },
            variables: {
              endpointId: "$route.endpointId",
              rateLimiterId: "$route.limiterId",
              reason: "$form.reason",
            },
            submit: { label: "Save", reset: true },
          }}
          scope={{ route: { endpointId: "e1", limiterId: "l1" } }}
        />,
        transport,
      ),
    );
    const reason = (await screen.findByLabelText(/Reason/, undefined, { timeout: 10_000 })) as HTMLInputElement;
    fireEvent.change(reason, { target: { value: "too many calls" } });
    fireEvent.blur(reason);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(calls).toEqual([{ endpointId: "e1", rateLimiterId: "l1", reason: "too many calls" }]));
    await waitFor(() => expect((screen.getByLabelText(/Reason/) as HTMLInputElement).value).toBe(""));
    expect(container.querySelector(".ant-form-item-explain-error")).toBeNull();
  }, 30_000);
});

/** A controlled SchemaForm with two required fields, as views hold one. */
function RequiredFieldsForm({
  form: SchemaForm,
  onSubmit,
}: {
  form: typeof import("../../../renderer/form/SchemaForm.tsx").SchemaForm;
  onSubmit: (data: Record<string, unknown>) => void;
}) {
  const [data, setData] = useState<Record<string, unknown>>({});
  return (
    <FeedbackProvider>
      <SchemaForm
        schema={{
          type: "object",
          required: ["name", "url"],
          properties: {
            name: { type: "string", title: "Name", minLength: 1 },
            url: { type: "string", title: "URL", minLength: 1 },
          },
        }}
        formData={data}
        onChange={setData}
        onSubmit={onSubmit}
      />
    </FeedbackProvider>
  );
}

describe("form errors", () => {
  it("show only for fields the user has left until the first submit, then for every field", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const submitted: Record<string, unknown>[] = [];
    const { container } = render(<RequiredFieldsForm form={SchemaForm} onSubmit={(form) => submitted.push(form)} />);
    const errors = () => [...container.querySelectorAll(".ant-form-item-explain-error")].map((e) => e.textContent);
    const name = await screen.findByLabelText(/Name/, undefined, { timeout: 10_000 });
    fireEvent.focus(name);
    fireEvent.blur(name);
    await waitFor(() => expect(errors()).toEqual(["This field is required"]));
    fireEvent.change(name, { target: { value: "mine" } });
    await waitFor(() => expect(errors()).toEqual([]));
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(errors()).toEqual(["This field is required"]));
    expect(container.querySelector("#root_url")?.closest(".ant-form-item")?.textContent).toContain("required");
    expect(submitted).toEqual([]);
  }, 30_000);
  it("a refusal from the service brings its first field into view and focus, or the form's error", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const scrolled: string[] = [];
    // jsdom has no layout, hence no scrollIntoView: one that records what was scrolled to.
    window.HTMLElement.prototype.scrollIntoView = function (this: HTMLElement) {
      scrolled.push(this.id || this.getAttribute("role") || this.tagName);
    };
    const schema = {
      type: "object",
      properties: {
        name: { type: "string", title: "Name" },
        target: { type: "object", title: "Target", properties: { url: { type: "string", title: "URL" } } },
      },
    } as const;
    const form = (extraErrors?: ReturnType<ErrorSchemaBuilder["addErrors"]>["ErrorSchema"], formError?: string) => (
      <FeedbackProvider>
        <SchemaForm
          schema={schema}
          formData={{ name: "n", target: { url: "u" } }}
          extraErrors={extraErrors}
          formError={formError}
          onChange={() => {}}
          onSubmit={() => {}}
        />
      </FeedbackProvider>
    );
    const { rerender } = render(form());
    await screen.findByLabelText("URL", undefined, { timeout: 10_000 });
    expect(scrolled).toEqual([]);
    rerender(form(new ErrorSchemaBuilder().addErrors("Refused by the egress policy.", "target.url").ErrorSchema));
    await waitFor(() => expect(document.activeElement?.id).toBe("root_target_url"));
    expect(scrolled).toEqual(["root_target_url"]);
    rerender(form(undefined, "The service is busy."));
    await waitFor(() => expect(scrolled).toEqual(["root_target_url", "alert"]));
    Reflect.deleteProperty(window.HTMLElement.prototype, "scrollIntoView");
  }, 30_000);
  it("a description an error already says in full is not repeated under it", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const keySchema = {
      type: "object",
      properties: {
        key: { type: "string", title: "Key", description: "1 to 128 letters, digits or dashes." },
        rate: { type: "integer", title: "Rate", description: "Calls allowed per interval." },
      },
    } as const;
    const { container } = render(
      <FeedbackProvider>
        <SchemaForm
          schema={keySchema}
          formData={{ key: "bad key!", rate: 5 }}
          extraErrors={
            new ErrorSchemaBuilder()
              .addErrors("A key is 1 to 128 letters, digits or dashes.", "key")
              .addErrors("Use 10 or more", "rate").ErrorSchema
          }
          onChange={() => {}}
          onSubmit={() => {}}
        />
      </FeedbackProvider>,
    );
    const item = (label: string) => screen.getByLabelText(label).closest(".ant-form-item")?.textContent ?? "";
    await screen.findByLabelText("Key", undefined, { timeout: 10_000 });
    expect(item("Key").split("1 to 128 letters").length - 1).toBe(1);
    // An error that says something else keeps the description beside it.
    expect(item("Rate")).toContain("Calls allowed per interval.");
    expect(container.textContent).toContain("Use 10 or more");
  }, 30_000);

  it("an object with nothing to fill yet (its fields depend on a choice not made) shows no empty section", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const { container } = render(
      <FeedbackProvider>
        <SchemaForm
          schema={{
            type: "object",
            required: ["kind", "settings"],
            properties: {
              kind: { type: "string", title: "Kind", enum: ["a", "b"] },
              settings: { type: "object", title: "Kind settings" },
              named: { type: "object", title: "Named", properties: { label: { type: "string", title: "Label" } } },
            },
          }}
          formData={{}}
          onChange={() => {}}
          onSubmit={() => {}}
        />
      </FeedbackProvider>,
    );
    await screen.findByLabelText("Label", undefined, { timeout: 10_000 });
    expect(container.textContent).toContain("Named");
    expect(container.textContent).not.toContain("Kind settings");
    // Nor an empty form item, whose margins left a gap between the fields around it.
    const fields = [...container.querySelectorAll(".rjsf-field")].map((f) => f.className);
    expect(fields.filter((c) => c.includes("rjsf-field-object"))).toHaveLength(2);
  }, 30_000);

  it("a field with help shows its error in the help's place while it has one", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const { container } = render(
      <FeedbackProvider>
        <SchemaForm
          schema={{ type: "object", properties: { code: { type: "string", title: "Code" } } }}
          uiSchema={{ code: { "ui:help": "main(params) may be async." } }}
          formData={{ code: "function main(" }}
          extraErrors={new ErrorSchemaBuilder().addErrors("Line 1: Unexpected end of input", "code").ErrorSchema}
          onChange={() => {}}
          onSubmit={() => {}}
        />
      </FeedbackProvider>,
    );
    const item = (await screen.findByLabelText("Code", undefined, { timeout: 10_000 })).closest(".ant-form-item");
    const errors = [...container.querySelectorAll(".ant-form-item-explain-error")].map((e) => e.textContent);
    expect(errors).toEqual(["Line 1: Unexpected end of input"]);
    expect(item?.textContent).not.toContain("main(params) may be async.");
    cleanup();
    // Without an error the help is below the control where a description goes (antd keeps that space).
    render(
      <FeedbackProvider>
        <SchemaForm
          schema={{ type: "object", properties: { code: { type: "string", title: "Code" } } }}
          uiSchema={{ code: { "ui:help": "main(params) may be async." } }}
          formData={{ code: "" }}
          onChange={() => {}}
          onSubmit={() => {}}
        />
      </FeedbackProvider>,
    );
    const fixed = (await screen.findByLabelText("Code")).closest(".ant-form-item");
    expect(fixed?.querySelector(".ant-form-item-extra")?.textContent).toBe("main(params) may be async.");
    expect(fixed?.querySelector(".ant-form-item-explain")).toBeNull();
  }, 30_000);
});

describe("the key-value field", () => {
  it("edits an object of strings as name and value rows: add, change, remove", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const changes: Record<string, unknown>[] = [];
    render(
      <FeedbackProvider>
        <SchemaForm
          schema={{
            type: "object",
            properties: {
              headers: { type: "object", title: "Headers", additionalProperties: { type: "string" } },
            },
          }}
          uiSchema={{ headers: { "ui:field": "key-value", "ui:options": { itemLabel: "header" } } }}
          formData={{ headers: { "x-team": "data" } }}
          onChange={(data) => changes.push(data)}
          onSubmit={() => {}}
        />
      </FeedbackProvider>,
    );
    expect(((await screen.findByLabelText("Headers 1 name")) as HTMLInputElement).value).toBe("x-team");
    fireEvent.click(screen.getByRole("button", { name: /Add header/ }));
    fireEvent.change(screen.getByLabelText("Headers 2 name"), { target: { value: "x-env" } });
    fireEvent.change(screen.getByLabelText("Headers 2 value"), { target: { value: "prod" } });
    await waitFor(() => expect(changes.at(-1)).toEqual({ headers: { "x-team": "data", "x-env": "prod" } }));
    fireEvent.click(screen.getByRole("button", { name: "Remove Headers 1" }));
    await waitFor(() => expect(changes.at(-1)).toEqual({ headers: { "x-env": "prod" } }));
  }, 30_000);
});

describe("the key-value field's errors", () => {
  const headersSchema = {
    type: "object",
    properties: {
      headers: {
        type: "object",
        title: "Headers",
        propertyNames: { pattern: "^[A-Za-z-]+$" },
        additionalProperties: { type: "string", pattern: "^[ -~]*$" },
      },
    },
  };
  async function submitHeaders(headers: Record<string, string>) {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const submitted: unknown[] = [];
    const { container } = render(
      <FeedbackProvider>
        <SchemaForm
          schema={headersSchema}
          uiSchema={{ headers: { "ui:field": "key-value" } }}
          formData={{ headers }}
          onChange={() => {}}
          onSubmit={(data) => submitted.push(data)}
          submitLabel="Save"
        />
      </FeedbackProvider>,
    );
    await screen.findByLabelText("Headers 1 name");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    return { container, submitted };
  }
  const marked = (label: string) => screen.getByLabelText(label).classList.contains("ant-input-status-error");

  it("marks a refused value on its own row and names it", async () => {
    const { container, submitted } = await submitHeaders({ "x-key": "café", "x-fine": "yes" });
    await waitFor(() => expect(container.textContent).toContain("x-key: Contains characters that are not allowed"));
    expect([marked("Headers 1 value"), marked("Headers 2 value"), marked("Headers 2 name")]).toEqual([
      true,
      false,
      false,
    ]);
    expect(submitted).toEqual([]);
  }, 30_000);

  it("drops errors that only repeat another: an if's, and a refused name's inner pattern", async () => {
    const { transformErrors } = await import("../../../renderer/form/SchemaForm.tsx");
    const errors = transformErrors([
      { name: "if", property: ".attrs", message: 'must match "then" schema', stack: "", schemaPath: "#/if" },
      {
        name: "pattern",
        property: ".attrs.h",
        message: "x",
        stack: "",
        schemaPath: "#/properties/h/propertyNames/pattern",
      },
      {
        name: "propertyNames",
        property: ".attrs.h",
        message: "property name must be valid",
        stack: "",
        schemaPath: "#/properties/h/propertyNames",
      },
    ]);
    expect(errors.map((e) => [e.name, e.message])).toEqual([
      ["propertyNames", "A name contains characters that are not allowed"],
    ]);
  });

  it("says in words how many items a list needs, not ajv's 'must NOT have fewer than 1 items'", async () => {
    const { transformErrors } = await import("../../../renderer/form/SchemaForm.tsx");
    const error = (name: string, limit: number) => ({
      name,
      property: ".methods",
      message: "must NOT have …",
      params: { limit },
      stack: "",
      schemaPath: `#/properties/methods/${name}`,
    });
    const errors = transformErrors([error("minItems", 1), error("minItems", 2), error("maxItems", 20)]);
    expect(errors.map((e) => e.message)).toEqual(["Add at least one", "Add at least 2", "Use at most 20"]);
  });

  it("says once that a name is refused, and which", async () => {
    const { container, submitted } = await submitHeaders({ "bad name": "ok", "x-fine": "yes" });
    await waitFor(() => expect(container.textContent).toContain("bad name: this name is not allowed"));
    const text = container.textContent ?? "";
    expect(text.split("A name contains characters that are not allowed").length - 1).toBe(1);
    expect(text).not.toContain("property name must be valid");
    expect(text).not.toContain("x-fine:");
    expect(marked("Headers 1 name")).toBe(true);
    expect(submitted).toEqual([]);
  }, 30_000);
});

describe("the tags-input edit widget", () => {
  it("edits an array of strings as tags instead of one input per item", async () => {
    const { SchemaForm } = await import("../../../renderer/form/SchemaForm.tsx");
    const { container } = render(
      <FeedbackProvider>
        <SchemaForm
          schema={{
            type: "object",
            properties: { methods: { type: "array", title: "Methods", items: { type: "string" } } },
          }}
          uiSchema={{ methods: { "ui:widget": "tags-input" } }}
          formData={{ methods: ["eth_call", "eth_getLogs"] }}
          onChange={() => {}}
          onSubmit={() => {}}
        />
      </FeedbackProvider>,
    );
    await screen.findByText("eth_getLogs");
    expect(container.querySelector(".ant-select-multiple")).not.toBeNull();
    expect(container.textContent).not.toContain("Methods-1");
  }, 30_000);
});
