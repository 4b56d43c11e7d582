// @vitest-environment jsdom
// A list column declared `nowrap` marks its cells, and the stylesheet keeps their text on one line (decision
// 1842); the other columns' cells are not marked.
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Transport } from "../../../renderer/index.ts";
import type { ListView } from "../../../renderer/types.ts";
import { ListView as ListViewComponent } from "../../../renderer/views/ListView.tsx";
import { installDomStandIns, registryFor, withDataProviders } from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const view: ListView = {
  kind: "list",
  query: "Invoices",
  rows: "invoices",
  columns: [
    { field: "/number", label: "Invoice" },
    { field: "/payment", label: "Payment", nowrap: true },
  ],
};
const registry = { ...registryFor("owner"), operations: { Invoices: "query Invoices { invoices }" } };

describe("a nowrap column", () => {
  it("marks its cells, and only its own", async () => {
    const transport: Transport = async () => ({
      invoices: [{ id: "a", number: "NP-0001", payment: "Authentication needed" }],
    });
    render(withDataProviders(<ListViewComponent view={view} scope={{}} />, transport, registry));
    const payment = (await screen.findByText("Authentication needed")).closest("td");
    const number = screen.getByText("NP-0001").closest("td");
    expect(payment?.getAttribute("data-nowrap")).toBe("true");
    expect(number?.hasAttribute("data-nowrap")).toBe(false);
  });
});
