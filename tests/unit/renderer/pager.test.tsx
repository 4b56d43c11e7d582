// @vitest-environment jsdom
// A list's pager offers only what there is to do: no pager on an empty first page, a count without
// Previous or Next on the only page, both buttons (each enabled when it leads somewhere) otherwise; the
// page size it names is the page's own.
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Transport } from "../../../renderer/index.ts";
import type { ListView } from "../../../renderer/types.ts";
import { ListView as ListViewComponent } from "../../../renderer/views/ListView.tsx";
import { installDomStandIns, registryFor, withDataProviders } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const view: ListView = {
  kind: "list",
  query: "Things",
  rows: "things.edges[].node",
  columns: [{ field: "/id", label: "Id" }],
  paging: {
    first: "first",
    after: "after",
    endCursor: "things.pageInfo.endCursor",
    hasNextPage: "things.pageInfo.hasNextPage",
    total: "things.totalCount",
    pageSize: 2,
  },
  empty: { title: "No things yet" },
};

const registry = {
  ...registryFor("owner"),
  operations: { Things: "query Things($first: Int, $after: String) { things }" },
};

/** Serves `count` things, two a page. */
function serve(count: number) {
  const transport: Transport = async (_document, variables = {}) => {
    const start = variables.after ? Number(variables.after) : 0;
    const ids = Array.from({ length: count }, (_, i) => `thing-${i + 1}`).slice(start, start + 2);
    return {
      things: {
        edges: ids.map((id) => ({ node: { id } })),
        pageInfo: { endCursor: String(start + ids.length), hasNextPage: start + ids.length < count },
        totalCount: count,
      },
    };
  };
  render(withDataProviders(<ListViewComponent view={view} scope={{}} />, transport, registry));
}

const button = (name: string) => screen.queryByRole("button", { name }) as HTMLButtonElement | null;

describe("the pager of a list", () => {
  it("is not shown under an empty list", async () => {
    serve(0);
    await screen.findByText("No things yet", undefined, { timeout: 10_000 });
    expect(button("Previous")).toBeNull();
    expect(button("Next")).toBeNull();
    expect(screen.queryByLabelText("Rows per page")).toBeNull();
  });

  it("shows the count but no Previous or Next when every row is on the page", async () => {
    serve(2);
    await screen.findByText("thing-2", undefined, { timeout: 10_000 });
    expect(screen.getByText("2 total · showing 2")).toBeTruthy();
    // The manifest's page size is not one of the usual ones, and the select still names it.
    expect((screen.getByLabelText("Rows per page") as HTMLSelectElement).value).toBe("2");
    expect(button("Previous")).toBeNull();
    expect(button("Next")).toBeNull();
  });

  it("shows Previous and Next when there is another page, each enabled when it leads somewhere", async () => {
    serve(3);
    await screen.findByText("thing-2", undefined, { timeout: 10_000 });
    expect(button("Previous")?.disabled).toBe(true);
    expect(button("Next")?.disabled).toBe(false);
    fireEvent.click(button("Next") as HTMLButtonElement);
    await screen.findByText("thing-3", undefined, { timeout: 10_000 });
    expect(button("Previous")?.disabled).toBe(false);
    expect(button("Next")?.disabled).toBe(true);
  });
});
