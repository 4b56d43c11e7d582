import { afterEach, describe, expect, it } from "vitest";
import { createFilter, type Filter } from "../../../server/dataplane/sandbox/filter.ts";
import { sandboxProcess } from "../../../server/dataplane/sandbox/process.ts";
import type { FilterOutcome } from "../../../server/dataplane/sandbox/types.ts";

// A function's result past its limit is refused by the sandbox process itself: what crosses the pipe is
// the refusal, never the result (a 200 MB result copied to the service cost it its size several times).

const MIB = 1024 * 1024;
const made: Filter[] = [];
afterEach(() => {
  for (const f of made.splice(0)) f.dispose();
});

async function capped(source: string, maxResultBytes: number, timeoutMs = 5_000): Promise<Filter> {
  const f = await createFilter({
    source,
    version: "V4",
    limits: { timeoutMs, memoryBytes: 128 * MIB, maxResultBytes },
    owner: null,
  });
  made.push(f);
  return f;
}

function failed(outcome: FilterOutcome) {
  if (outcome.ok) throw new Error(`expected a failure, got a result of ${outcome.sizeBytes} bytes`);
  return outcome.error;
}

describe("a result past the limit", () => {
  it.each([
    ["slow", 5_000],
    ["fast", 1_000],
  ])("never leaves the sandbox process (%s lane): the answer is the refusal", async (_lane, timeoutMs) => {
    const sandbox = sandboxProcess(timeoutMs);
    const fid = sandbox.newId();
    const opened = await sandbox.open(
      fid,
      {
        version: 4,
        timeoutMs,
        memoryMiB: 128,
        maxLogLines: 10,
        maxLogChars: 100,
        maxLogCharsPerCall: 1000,
        snapshots: false,
        heap: true,
        maxResultBytes: MIB,
      },
      "function main() { return 'x'.repeat(20 * 1024 * 1024); }",
      { owner: null },
    );
    expect(opened.error).toBeNull();
    const outcome = await sandbox.run(fid, "{}", "[]", timeoutMs, undefined);
    sandbox.close(fid);
    expect(outcome.error).toBeNull();
    expect(outcome.body.length).toBeLessThan(1_000);
    expect(JSON.parse(outcome.body.slice(1))).toMatchObject({
      kind: "RESULT_TOO_LARGE",
      message: "main returned at least 20.0 MiB of JSON; a result is at most 1 MiB.",
    });
  });

  it("counts UTF-8 bytes exactly when the text is within the limit in characters", async () => {
    // 400,000 "é" are 400,002 characters of JSON but 800,002 bytes.
    const f = await capped("function main() { return 'é'.repeat(400000); }", 600_000);
    expect(failed(await f.run({ data: [] }))).toEqual({
      kind: "RESULT_TOO_LARGE",
      message: "main returned 0.8 MiB of JSON; a result is at most 0.6 MiB.",
    });
  });

  it("refuses an async main's result too, and answers one at the limit", async () => {
    const f = await capped("async function main() { return 'x'.repeat(2 * 1024 * 1024); }", MIB);
    expect(failed(await f.run({ data: [] })).kind).toBe("RESULT_TOO_LARGE");
    const atLimit = await capped("function main() { return 'x'.repeat(1024 * 1024 - 2); }", MIB);
    expect(await atLimit.run({ data: [] })).toMatchObject({ ok: true, sizeBytes: MIB });
  });

  it("refuses the batch passed through untouched when it is past the limit", async () => {
    const text = JSON.stringify(["x".repeat(2 * MIB)]);
    const f = await capped("function main(stream) { return stream.data; }", MIB);
    expect(failed(await f.run({ data: text }))).toEqual({
      kind: "RESULT_TOO_LARGE",
      message: "main returned 2.0 MiB of JSON; a result is at most 1 MiB.",
    });
  });

  it("leaves filters without a limit", async () => {
    const f = await createFilter({ source: "function main() { return 'x'.repeat(2 * 1024 * 1024); }", owner: null });
    made.push(f);
    expect(await f.run({ data: [] })).toMatchObject({ ok: true, sizeBytes: 2 * MIB + 2 });
  });
});
