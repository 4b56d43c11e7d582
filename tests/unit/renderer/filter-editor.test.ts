import { describe, expect, it } from "vitest";
import { errorLineOf } from "../../../src/widgets/code-editor.tsx";
import { describeShape } from "../../../src/widgets/filter-editor.tsx";

describe("filter editor", () => {
  it("describes a dataset's shape from a sample, arrays by their first item", () => {
    const sample = [{ block: { number: "0x5", hash: `0x${"ab".repeat(32)}`, transactions: [] }, receipts: [] }];
    expect(describeShape(sample, "stream.data")).toEqual([
      "stream.data: array (1)",
      "  [0]: object",
      "    block: object",
      "      number: hex number",
      "      hash: hex string",
      "      transactions: array (0)",
      "    receipts: array (0)",
    ]);
  });

  it("finds the line of a compile error in the service's and the test run's messages", () => {
    expect(errorLineOf(["Line 3, column 7: SyntaxError: Unexpected token"])).toBe(3);
    expect(errorLineOf(["SYNTAX: SyntaxError: unexpected token (line 12)"])).toBe(12);
    expect(errorLineOf(["This field is required"])).toBeUndefined();
  });
});
