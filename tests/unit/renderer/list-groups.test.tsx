// @vitest-environment jsdom
// A list view's `group`: rows in closed sections named by the group pattern's match and counted, a
// search box over the columns shown that keeps the matching rows and opens their groups, and the
// rows' actions inside each group.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Transport } from "../../../renderer/index.ts";
import type { ListView } from "../../../renderer/types.ts";
import { groupOf } from "../../../renderer/views/ListGroups.tsx";
import { ListView as ListViewComponent } from "../../../renderer/views/ListView.tsx";
import { installDomStandIns, registryFor, withDataProviders } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const group = { field: "/name", pattern: "^[a-zA-Z0-9]+_", otherLabel: "Other methods", search: "Search methods" };
const view: ListView = {
  kind: "list",
  query: "Methods",
  rows: "methods",
  group,
  columns: [
    { field: "/name", label: "Method" },
    { field: "/description", label: "Description" },
  ],
  rowActions: [{ label: "Disable", mutation: "DisableMethod", variables: { id: "$row.id" } }],
};
const methods = [
  ["eth_call", "Calls a contract"],
  ["eth_blockNumber", "The latest block"],
  ["debug_traceTransaction", "Traces a transaction"],
  ["trace_block", "Traces a block"],
  ["trace_transaction", "Traces one transaction"],
  ["web3", "No namespace"],
].map(([name, description]) => ({ id: name, name, description }));

const registry = {
  ...registryFor("owner"),
  operations: {
    Methods: "query Methods { methods }",
    DisableMethod: "mutation DisableMethod($id: ID!) { disableMethod }",
  },
};

function serve() {
  const transport: Transport = async () => ({ methods });
  render(withDataProviders(<ListViewComponent view={view} scope={{}} />, transport, registry));
}

const groups = () =>
  [...document.querySelectorAll("details.np-group")].map((details) => ({
    name: details.getAttribute("data-group"),
    count: details.querySelector(".np-group-count")?.textContent,
    open: (details as HTMLDetailsElement).open,
    rows: [...details.querySelectorAll(".np-table-row")].length,
  }));

describe("a list in groups", () => {
  it("names a row's group by the pattern's match, else the other label", () => {
    expect(groupOf(group, { name: "eth_call" })).toBe("eth_");
    expect(groupOf(group, { name: "web3" })).toBe("Other methods");
    expect(groupOf({ field: "/name" }, { name: "web3" })).toBe("web3");
  });

  it("shows each group closed, named and counted, in the order of its first row", async () => {
    serve();
    await screen.findByText("eth_call");
    expect(groups()).toEqual([
      { name: "eth_", count: "2", open: false, rows: 2 },
      { name: "debug_", count: "1", open: false, rows: 1 },
      { name: "trace_", count: "2", open: false, rows: 2 },
      { name: "Other methods", count: "1", open: false, rows: 1 },
    ]);
    const row = screen.getByText("trace_block").closest("tr") as HTMLElement;
    expect(within(row).getByRole("button", { name: "Disable" })).toBeTruthy();
  });

  it("keeps the rows that match a search in any column shown, their groups open", async () => {
    serve();
    await screen.findByText("eth_call");
    const search = screen.getByRole("searchbox", { name: "Search methods" });
    fireEvent.change(search, { target: { value: "TRANSACTION" } });
    expect(groups()).toEqual([
      { name: "debug_", count: "1", open: true, rows: 1 },
      { name: "trace_", count: "1", open: true, rows: 1 },
    ]);
    fireEvent.change(search, { target: { value: "nothing like it" } });
    expect(groups()).toEqual([]);
    expect(screen.getByText(/Nothing matches/)).toBeTruthy();
    fireEvent.change(search, { target: { value: "" } });
    expect(groups().map((g) => g.open)).toEqual([false, false, false, false]);
  });
});
