import { describe, expect, it } from "vitest";
import { paramsOf } from "../../../server/domains/functions/service.ts";
import { MAX_JSON_DEPTH, MAX_JSON_VALUES, unsafeValues } from "../../../server/platform/validation.ts";

const nested = (depth: number) => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe("unsafeValues: what no argument may hold, named by pointer", () => {
  it("passes ordinary values, tabs and newlines in text, safe integers and fractions", () => {
    expect(unsafeValues({ name: "a\tb\r\nc", n: Number.MAX_SAFE_INTEGER, f: 1.5, list: [1, "x", null] })).toEqual([]);
    expect(unsafeValues(nested(MAX_JSON_DEPTH - 1))).toEqual([]);
  });

  it("names control characters in values and keys, unsafe integers and non-finite numbers", () => {
    const fields = unsafeValues({ name: "a\u0000b", deep: { list: ["ok", "\u001b[31m"] }, big: 2 ** 53, huge: 1e308 });
    expect(fields.map((f) => f.pointer)).toEqual(["/name", "/deep/list/1", "/big", "/huge"]);
    expect(unsafeValues({ attributes: { "a\u0000": 1 } }).map((f) => f.pointer)).toEqual(["/attributes"]);
    expect(unsafeValues({ x: Number.NaN }, "/params").map((f) => f.pointer)).toEqual(["/params/x"]);
  });

  it("names unpaired surrogates in values and keys, and passes whole pairs", () => {
    expect(unsafeValues({ emoji: "a\ud83d\ude00b", name: "a\ud800", list: ["\udc00"], map: { "\udbff": 1 } })).toEqual([
      {
        pointer: "/name",
        message: "This contains an unpaired UTF-16 surrogate (half of a character), which cannot be stored.",
      },
      {
        pointer: "/list/0",
        message: "This contains an unpaired UTF-16 surrogate (half of a character), which cannot be stored.",
      },
      {
        pointer: "/map",
        message: "A key contains an unpaired UTF-16 surrogate (half of a character), which cannot be stored.",
      },
    ]);
    // Reversed halves are two halves alone.
    expect(unsafeValues("\ude00\ud83d")).toHaveLength(1);
  });

  it("names a value nested too deep or too large where it goes wrong, without overflowing the stack", () => {
    const deep = unsafeValues({ params: nested(100_000) });
    expect(deep).toHaveLength(1);
    expect(deep[0].pointer.startsWith("/params/a/a")).toBe(true);
    const wide = unsafeValues({ ok: 1, data: new Array(MAX_JSON_VALUES + 5).fill(0) });
    expect(wide).toHaveLength(1);
    expect(wide[0].pointer.startsWith("/data/")).toBe(true);
  });

  it("checks JSON text a function's params arrive as, after parsing, on /paramsJson", () => {
    const text = `${"[".repeat(5000)}1${"]".repeat(5000)}`;
    expect(() => paramsOf({ paramsJson: text })).toThrowError(
      expect.objectContaining({
        code: "BAD_USER_INPUT",
        fields: [expect.objectContaining({ pointer: expect.stringMatching(/^\/paramsJson\//) })],
      }),
    );
    expect(paramsOf({ paramsJson: '{"data": [1, 2]}' })).toEqual({ data: [1, 2] });
  });
});
