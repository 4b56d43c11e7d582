import { describe, expect, it } from "vitest";
import { type PlanKvLimits, parseItemsText, parseUploadedItems } from "../../../server/domains/kv/limits.ts";

// An uploaded file is read on the service's thread: however it is made, the service keeps answering while
// it is read, and it is never split into millions of strings at once.

const limits: PlanKvLimits = {
  keys: 10,
  openUploads: 3,
  itemsPerKey: 10_000,
  valueBytes: 1024,
  writesPerPeriod: 100_000,
  centsPerMillionWrites: null,
};

/** Turns of the event loop while `work` runs. */
async function turnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  await work.finally(() => {
    done = true;
  });
  return turns;
}

describe("an uploaded file's items", () => {
  it("a file of nothing but line breaks or commas is read in turns, as one of items is", async () => {
    // Empty pieces were not counted: 64 MiB of line breaks held the service's thread for 11 s.
    for (const separator of ["\n", ","]) {
      const text = separator.repeat(1_000_000);
      const turns = await turnsDuring(parseUploadedItems(text, "/uploadId", limits, false));
      expect(turns, JSON.stringify(separator)).toBeGreaterThanOrEqual(10);
    }
  });

  it("reads CRLF and LF lines and commas alike, and names a bad item's line", async () => {
    expect(await parseUploadedItems("a\r\nb,c\r\n\r\nd\n,e", "/uploadId", limits, false)).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
    expect(await parseUploadedItems("0xAb\r\n0xaB\r\n", "/uploadId", limits, true)).toEqual(["0xab"]);
    expect(parseItemsText("a, b\n\nc", "/itemsText")).toEqual(["a", "b", "c"]);
    await expect(parseUploadedItems("a\r\nb\r\n\r\nc\u0001\r\n", "/uploadId", limits, false)).rejects.toThrow(
      "Line 4: An item cannot contain commas or control characters.",
    );
  });
});
