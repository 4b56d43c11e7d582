// @vitest-environment jsdom
// A page of more than VIRTUAL_THRESHOLD rows renders only the rows in view, and still sorts by its
// column headers and selects rows for bulk actions, as a short page does.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Transport } from "../../../renderer/index.ts";
import { PHONE_WIDTH } from "../../../renderer/media.ts";
import type { ListView } from "../../../renderer/types.ts";
import { ListView as ListViewComponent, VIRTUAL_THRESHOLD } from "../../../renderer/views/ListView.tsx";
import { installDomStandIns, registryFor, withDataProviders } from "./harness.tsx";

// jsdom lays nothing out, so every element measures 0 and the virtualiser would show no rows: give
// elements the size of a list's scroll area.
const measured = ["clientHeight", "clientWidth"] as const;
const layoutless = measured.map((key) => Object.getOwnPropertyDescriptor(Element.prototype, key));
beforeAll(() => {
  installDomStandIns();
  Object.defineProperty(Element.prototype, "clientHeight", { configurable: true, get: () => 640 });
  Object.defineProperty(Element.prototype, "clientWidth", { configurable: true, get: () => 1000 });
});
afterAll(() => {
  measured.forEach((key, i) => {
    const original = layoutless[i];
    if (original) Object.defineProperty(Element.prototype, key, original);
  });
});
afterEach(cleanup);

const ROWS = VIRTUAL_THRESHOLD + 50;

const view: ListView = {
  kind: "list",
  query: "Things",
  rows: "things",
  sort: { variable: "orderBy" },
  columns: [
    { field: "/label", label: "Label", sortable: "LABEL_ASC" },
    { field: "/id", label: "Id" },
  ],
  bulkActions: [{ label: "Archive", mutation: "ArchiveThing", variables: { id: "$row.id" } }],
};

const registry = {
  ...registryFor("owner"),
  operations: {
    Things: "query Things($orderBy: String) { things }",
    ArchiveThing: "mutation ArchiveThing($id: ID!) { archiveThing }",
  },
};

function serve() {
  const calls: { name: string; variables: Record<string, unknown> }[] = [];
  const transport: Transport = async (document, variables = {}) => {
    const name = /\b(?:query|mutation) (\w+)/.exec(document)?.[1] ?? "";
    calls.push({ name, variables });
    if (name === "ArchiveThing") return { archiveThing: true };
    const ids = Array.from({ length: ROWS }, (_, i) => i);
    if (variables.orderBy === "LABEL_DESC") ids.reverse();
    return { things: ids.map((i) => ({ id: `t${i}`, label: `thing ${String(i).padStart(3, "0")}` })) };
  };
  render(withDataProviders(<ListViewComponent view={view} scope={{}} />, transport, registry));
  return calls;
}

const queries = (calls: ReturnType<typeof serve>) => calls.filter((call) => call.name === "Things");

describe(`a list page of more than ${VIRTUAL_THRESHOLD} rows`, () => {
  it("renders only the rows in view", async () => {
    serve();
    await screen.findByText("thing 000");
    const table = screen.getByRole("table");
    expect(table.getAttribute("aria-rowcount")).toBe(String(ROWS + 1));
    expect(document.querySelector(".np-table")).toBeNull();
    expect(within(table).getAllByRole("row").length).toBeLessThan(ROWS);
  });

  it("sorts by a sortable column header: ascending, descending, then the service's default", async () => {
    const calls = serve();
    await screen.findByText("thing 000");
    const header = () => screen.getByRole("columnheader", { name: /Label/ });
    expect(header().getAttribute("aria-sort")).toBe("none");
    expect(within(screen.getByRole("columnheader", { name: "Id" })).queryByRole("button")).toBeNull();

    fireEvent.click(within(header()).getByRole("button"));
    await waitFor(() => expect(queries(calls).at(-1)?.variables).toMatchObject({ orderBy: "LABEL_ASC" }));
    await waitFor(() => expect(header().getAttribute("aria-sort")).toBe("ascending"));

    fireEvent.click(within(header()).getByRole("button"));
    await waitFor(() => expect(queries(calls).at(-1)?.variables).toMatchObject({ orderBy: "LABEL_DESC" }));
    await screen.findByText(`thing ${String(ROWS - 1).padStart(3, "0")}`);
    expect(header().getAttribute("aria-sort")).toBe("descending");

    fireEvent.click(within(header()).getByRole("button"));
    await waitFor(() => expect(queries(calls).at(-1)?.variables.orderBy).toBeUndefined());
    await waitFor(() => expect(header().getAttribute("aria-sort")).toBe("none"));
  }, 30_000);

  it("selects rows one by one or all at once, and a bulk action runs once per selected row", async () => {
    const calls = serve();
    await screen.findByText("thing 000");
    const rowBoxes = () => screen.getAllByRole("checkbox", { name: "Select row" });
    fireEvent.click(rowBoxes()[0]);
    fireEvent.click(rowBoxes()[2]);
    const bar = await screen.findByRole("region", { name: "Bulk actions" });
    expect(within(bar).getByText("2 selected")).toBeTruthy();
    expect((screen.getByRole("checkbox", { name: "Select all" }) as HTMLInputElement).indeterminate).toBe(true);

    fireEvent.click(within(bar).getByRole("button", { name: "Archive" }));
    await waitFor(() =>
      expect(calls.filter((call) => call.name === "ArchiveThing").map((call) => call.variables)).toEqual([
        { id: "t0" },
        { id: "t2" },
      ]),
    );
    await waitFor(() => expect(screen.queryByRole("region", { name: "Bulk actions" })).toBeNull());

    fireEvent.click(screen.getByRole("checkbox", { name: "Select all" }));
    expect(await screen.findByText(`${ROWS} selected`)).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Clear selection" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Bulk actions" })).toBeNull());
  }, 30_000);
});

describe(`a list page of more than ${VIRTUAL_THRESHOLD} rows on a phone`, () => {
  it("renders its rows as the cards of every list, not the virtual grid", async () => {
    const standIn = window.matchMedia;
    window.matchMedia = ((query: string) => ({
      ...standIn(query),
      matches: query === PHONE_WIDTH,
    })) as typeof window.matchMedia;
    try {
      serve();
      await screen.findByText("thing 000");
      expect(document.querySelector(".np-table")).not.toBeNull();
      expect(document.querySelectorAll(".np-table-row")).toHaveLength(ROWS);
    } finally {
      window.matchMedia = standIn;
    }
  }, 30_000);
});
