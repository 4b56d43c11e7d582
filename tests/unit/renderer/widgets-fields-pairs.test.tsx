// @vitest-environment jsdom
// The `fields` widget's `pairs` option: an array of entries (a request's headers) shown one row each,
// in order, repeated names kept; without the option an array is not shown as fields.
import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

afterEach(cleanup);

describe("fields with pairs", () => {
  it("shows each entry as its name and value, in order, repeated names kept", async () => {
    const { getWidget } = await import("../../../renderer/widgets/registry.ts");
    await import("../../../renderer/widgets/builtins.tsx");
    const Fields = getWidget("fields")?.read;
    if (!Fields) throw new Error("fields is not registered");
    const headers = [
      { name: "content-type", value: "application/json" },
      { name: "x-qn-signature", value: "abc123" },
      { name: "set-cookie", value: "a=1" },
      { name: "set-cookie", value: "b=2" },
    ];
    const { container } = render(<Fields value={headers} options={{ pairs: { name: "/name", value: "/value" } }} />);
    const rows = [...container.querySelectorAll(".np-fields-row")].map((row) => [
      row.querySelector("dt")?.textContent,
      row.querySelector("dd")?.textContent,
    ]);
    expect(rows).toEqual(headers.map((h) => [h.name, h.value]));
    cleanup();
    const plain = render(<Fields value={headers} options={{}} />);
    expect(plain.container.querySelectorAll(".np-fields-row")).toHaveLength(0);
  });
});
