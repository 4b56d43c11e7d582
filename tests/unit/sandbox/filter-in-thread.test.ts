import { describe, expect, it } from "vitest";
import { InThreadSandbox } from "../../../server/dataplane/sandbox/in-thread.ts";
import { runFiltersOn, sandboxProcess } from "../../../server/dataplane/sandbox/process.ts";
import { failed, filter, filterCases } from "./filter-cases.ts";

// As the engine's own process runs them (server/engine.ts): filters on this thread.
const lost: string[] = [];
runFiltersOn(new InThreadSandbox((message) => lost.push(message)));

filterCases("this thread");

describe("filter sandbox (this thread): where calls run", () => {
  it("runs filters on this thread and functions' long limits in the sandbox process", async () => {
    const pid = sandboxProcess().pid;
    const f = await filter("function main(s) { return s.data.length }");
    expect(await f.run({ data: [1, 2] })).toMatchObject({ ok: true, resultJson: "2" });
    // No fast sandbox process was started for it.
    expect(sandboxProcess().pid).toBe(pid);
    const long = await filter("function main() { return 'slow lane' }", { offThread: true });
    expect(await long.run({ data: [] })).toMatchObject({ ok: true, resultJson: '"slow lane"' });
    expect(lost).toEqual([]);
  });

  it("a loop that never ends fails its call with TIMEOUT and the next call runs", async () => {
    const f = await filter("function main(s) { if (s.data[0] === 'spin') for (;;) {} return 'fine' }", {
      limits: { timeoutMs: 50 },
    });
    const started = performance.now();
    expect(failed(await f.run({ data: ["spin"] }))).toEqual({
      kind: "TIMEOUT",
      message: "filter ran longer than its time limit of 50 ms",
    });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await f.run({ data: ["ok"] })).toMatchObject({ ok: true, resultJson: '"fine"' });
  });
});
