import { describe, expect, it } from "vitest";
import { AppError } from "../../../server/platform/errors.ts";
import { connection, cursorArgument, decodeCursor, encodeCursor, pageSize } from "../../../server/platform/paging.ts";

const ID = "3ff46413-18aa-4f38-9f7a-540576a50987";

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a refusal");
}

describe("cursor codec", () => {
  it("gives back each part as its kind: strings, ids, integers and timestamps", () => {
    const at = new Date("2026-11-23T15:36:48.754Z");
    const text = encodeCursor(["label", ID, 42, at]);
    expect(decodeCursor(text, ["string", "uuid", "integer", "timestamp"])).toEqual(["label", ID, 42, at]);
  });

  it("is opaque: URL-safe text that shows no raw value", () => {
    const text = encodeCursor(["a/b+c", 1]);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(text).not.toContain("a/b");
  });

  it.each([
    ["text that is not base64 JSON", "%%%"],
    ["JSON that is not a list", Buffer.from('{"t":"x"}').toString("base64url")],
    ["a list of another length", encodeCursor([ID])],
    ["an id that is not a UUID", encodeCursor(["x", "not-a-uuid"])],
    ["a number where a string belongs", encodeCursor([1, ID])],
  ])("refuses %s as BAD_USER_INPUT on the argument", (_, text) => {
    const error = refusal(() => decodeCursor(text, ["string", "uuid"], "nextAt"));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/nextAt" }] });
  });

  it("refuses a timestamp that is no date and an integer that is a fraction", () => {
    expect(refusal(() => decodeCursor(encodeCursor(["yesterday"]), ["timestamp"]))).toMatchObject({
      fields: [{ pointer: "/after" }],
    });
    expect(refusal(() => decodeCursor(encodeCursor([1.5]), ["integer"]))).toMatchObject({ code: "BAD_USER_INPUT" });
  });

  it.each([
    ["a year past 9999 (written +099999-…, which PostgreSQL refuses)", encodeCursor(["+099999-01-01T00:00:00.000Z"])],
    ["the latest date JavaScript has", encodeCursor(["+275760-09-13T00:00:00.000Z"])],
    ["a year before 1", encodeCursor(["-000001-01-01T00:00:00.000Z"])],
    ["year 0, which PostgreSQL does not have", encodeCursor(["0000-06-01T00:00:00.000Z"])],
  ])("refuses a timestamp PostgreSQL cannot compare with: %s", (_, text) => {
    expect(refusal(() => decodeCursor(text, ["timestamp"]))).toMatchObject({ code: "BAD_USER_INPUT" });
  });

  it("refuses a string part holding NUL, which no PostgreSQL text holds", () => {
    expect(refusal(() => decodeCursor(encodeCursor(["a\u0000b"]), ["string"]))).toMatchObject({
      code: "BAD_USER_INPUT",
    });
    expect(decodeCursor(encodeCursor(["9999-12-31T23:59:59.999Z"]), ["timestamp"])[0].getUTCFullYear()).toBe(9999);
  });

  it("reads no cursor (absent or empty) as the first page", () => {
    expect(cursorArgument(undefined, ["integer"])).toBeNull();
    expect(cursorArgument(null, ["integer"])).toBeNull();
    expect(cursorArgument("", ["integer"])).toBeNull();
  });
});

describe("page size", () => {
  it("is the asked size, or the fallback when none is asked", () => {
    expect(pageSize(undefined)).toBe(20);
    expect(pageSize(null, { fallback: 50 })).toBe(50);
    expect(pageSize(1)).toBe(1);
    expect(pageSize(500)).toBe(500);
    expect(pageSize(200, { max: 200 })).toBe(200);
  });

  it("refuses a size that is not a whole number from 1 to max, on its argument (first unless named)", () => {
    for (const size of [-5, 0, 501, 2.5, Number.NaN])
      expect(refusal(() => pageSize(size))).toMatchObject({
        code: "BAD_USER_INPUT",
        fields: [{ pointer: "/first", message: "Give a page size from 1 to 500." }],
      });
    expect(refusal(() => pageSize(201, { argument: "limit", max: 200 }))).toMatchObject({
      fields: [{ pointer: "/limit", message: "Give a page size from 1 to 200." }],
    });
  });
});

describe("connection", () => {
  const rows = [1, 2, 3].map((n) => ({ n }));
  const keyOf = (row: { n: number }) => [row.n];

  it("keeps the page, gives each row its cursor, and says more follow when the extra row was read", () => {
    const page = connection(rows, 2, keyOf);
    expect(page.rows).toEqual([{ n: 1 }, { n: 2 }]);
    expect(page.edges.map((edge) => decodeCursor(edge.cursor, ["integer"]))).toEqual([[1], [2]]);
    expect(page.pageInfo).toEqual({ hasNextPage: true, endCursor: page.edges[1].cursor });
  });

  it("ends on the last page, and an empty page has no end cursor", () => {
    expect(connection(rows, 3, keyOf).pageInfo.hasNextPage).toBe(false);
    expect(connection([], 3, keyOf).pageInfo).toEqual({ hasNextPage: false, endCursor: null });
  });
});
