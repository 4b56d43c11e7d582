import { describe, expect, it, vi } from "vitest";
import type { FilterOutcome } from "../../../server/dataplane/sandbox/types.ts";
import { runWarm, type WarmFilter, WarmIsolates, type WarmLimits } from "../../../server/dataplane/sandbox/warm.ts";

const counter = "var calls = 0; function main(params) { calls++; return { calls, v: params.data.v } }";
const run = (accountId: string, functionId: string, source: string, v = 1) =>
  runWarm({ accountId, functionId }, { source, version: "V4", owner: accountId }, { data: JSON.stringify({ v }) });

describe("warm function isolates", () => {
  it("reuse one isolate per account, function and version", async () => {
    expect(await run("acct-a", "fn-1", counter)).toMatchObject({ ok: true, resultJson: '{"calls":1,"v":1}' });
    expect(await run("acct-a", "fn-1", counter, 2)).toMatchObject({ resultJson: '{"calls":2,"v":2}' });
    // Another function, another account, or a new version of the code: its own isolate.
    expect(await run("acct-a", "fn-2", counter)).toMatchObject({ resultJson: '{"calls":1,"v":1}' });
    expect(await run("acct-b", "fn-1", counter)).toMatchObject({ resultJson: '{"calls":1,"v":1}' });
    const v2 = `${counter}\n// v2`;
    expect(await run("acct-a", "fn-1", v2)).toMatchObject({ resultJson: '{"calls":1,"v":1}' });
    expect(await run("acct-a", "fn-1", counter)).toMatchObject({ resultJson: '{"calls":3,"v":1}' });
  });

  it("start a failed function's next call from a fresh isolate", async () => {
    const source =
      "var calls = 0; function main(params) { calls++; if (params.data.v === 0) throw new Error('no'); return calls }";
    expect(await run("acct-a", "fn-3", source)).toMatchObject({ resultJson: "1" });
    expect(await run("acct-a", "fn-3", source, 0)).toMatchObject({ ok: false, error: { message: "Error: no" } });
    expect(await run("acct-a", "fn-3", source)).toMatchObject({ resultJson: "1" });
  });
});

const MIB = 1024 * 1024;

/** A filter whose calls end when the test says; it records whether it was disposed, and whether mid-call. */
class FakeFilter implements WarmFilter {
  static made: FakeFilter[] = [];
  readonly ends: (() => void)[] = [];
  running = 0;
  disposed = false;
  disposedMidCall = false;
  constructor(readonly source: string) {
    FakeFilter.made.push(this);
  }
  run(): Promise<FilterOutcome> {
    this.running++;
    return new Promise((resolve) => {
      this.ends.push(() => {
        this.running--;
        resolve({
          ok: true,
          skipped: false,
          resultJson: this.source,
          sizeBytes: 1,
          durationMs: 1,
          memoryBytes: 0,
          logs: [],
        });
      });
    });
  }
  dispose(): void {
    this.disposed = true;
    if (this.running > 0) this.disposedMidCall = true;
  }
}

const fakePool = (limits: Partial<WarmLimits> = {}) => {
  FakeFilter.made = [];
  return new WarmIsolates(
    { heapBudgetBytes: 1024 * MIB, accountShareBytes: 512 * MIB, maxKept: 200, idleMs: 600_000, ...limits },
    (options) => new FakeFilter(options.source),
  );
};
const call = (pool: WarmIsolates, accountId: string, functionId: string, memoryMb: number) =>
  pool.run(
    { accountId, functionId },
    { source: `${accountId}/${functionId}`, limits: { memoryBytes: memoryMb * MIB }, owner: accountId },
    { data: "[]" },
  );
const made = (source: string) => FakeFilter.made.filter((f) => f.source === source);
const endAll = (source: string) => {
  for (const f of made(source)) for (const end of f.ends.splice(0)) end();
};

describe("the warm heap budget", () => {
  it("drops the least recently used idle isolates to keep a new one within the budget", async () => {
    const pool = fakePool();
    for (const fn of ["f1", "f2"]) {
      const ran = call(pool, "a", fn, 256);
      endAll(`a/${fn}`);
      await ran;
    }
    for (const fn of ["f1", "f2"]) {
      const ran = call(pool, "b", fn, 256);
      endAll(`b/${fn}`);
      await ran;
    }
    expect(pool.usage()).toMatchObject({ isolates: 4, heapBytes: 1024 * MIB });
    // a/f1 is used again, so a/f2 is the least recently used: it makes room for c's.
    const again = call(pool, "a", "f1", 256);
    endAll("a/f1");
    await again;
    const c = call(pool, "c", "f1", 256);
    endAll("c/f1");
    await c;
    expect(made("a/f2")[0].disposed).toBe(true);
    expect(made("a/f1")[0].disposed).toBe(false);
    expect(pool.usage()).toMatchObject({ isolates: 4, heapBytes: 1024 * MIB });
  });

  it("never drops an isolate running a call: with no idle room the call runs cold, disposed after it", async () => {
    const pool = fakePool();
    const inFlight = [call(pool, "a", "f1", 512), call(pool, "b", "f1", 512)];
    expect(pool.usage()).toMatchObject({ isolates: 2, heapBytes: 1024 * MIB, running: 2 });
    const cold = call(pool, "c", "f1", 256);
    expect(made("a/f1")[0].disposed || made("b/f1")[0].disposed).toBe(false);
    expect(made("c/f1")).toHaveLength(1);
    endAll("c/f1");
    expect(await cold).toMatchObject({ ok: true, resultJson: "c/f1" });
    expect(made("c/f1")[0].disposed).toBe(true);
    expect(pool.usage()).toMatchObject({ isolates: 2, running: 2 });

    // Once a/f1's call ends it may go, never while it runs; b/f1 still runs throughout.
    endAll("a/f1");
    await inFlight[0];
    const next = call(pool, "c", "f1", 256);
    endAll("c/f1");
    await next;
    expect(made("a/f1")[0]).toMatchObject({ disposed: true, disposedMidCall: false });
    expect(made("b/f1")[0]).toMatchObject({ disposed: false, running: 1 });
    endAll("b/f1");
    await inFlight[1];
    expect(FakeFilter.made.some((f) => f.disposedMidCall)).toBe(false);
  });

  it("holds one account to its share: its own idle isolates go first, another account's stay", async () => {
    const pool = fakePool();
    const b = call(pool, "b", "f1", 256);
    endAll("b/f1");
    await b;
    for (const fn of ["f1", "f2", "f3"]) {
      const ran = call(pool, "a", fn, 256);
      endAll(`a/${fn}`);
      await ran;
    }
    // a's share is 512 MB: a/f1 went for a/f3 although b's isolate was used earlier.
    expect(made("a/f1")[0].disposed).toBe(true);
    expect(made("b/f1")[0].disposed).toBe(false);
    expect(pool.usage().accountBytes).toEqual({ a: 512 * MIB, b: 256 * MIB });

    // Both of a's kept isolates running: a's next function runs cold, b's is untouched.
    const running = [call(pool, "a", "f2", 256), call(pool, "a", "f3", 256)];
    const cold = call(pool, "a", "f4", 256);
    endAll("a/f4");
    await cold;
    expect(made("a/f4")[0].disposed).toBe(true);
    expect(made("b/f1")[0].disposed).toBe(false);
    endAll("a/f2");
    endAll("a/f3");
    await Promise.all(running);
    expect(FakeFilter.made.some((f) => f.disposedMidCall)).toBe(false);
  });

  it("drops isolates idle past idleMs, never one whose call runs longer", async () => {
    vi.useFakeTimers();
    try {
      const pool = fakePool({ idleMs: 1_000 });
      const idle = call(pool, "a", "f1", 128);
      endAll("a/f1");
      await idle;
      const long = call(pool, "a", "f2", 128);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(made("a/f1")[0].disposed).toBe(true);
      expect(made("a/f2")[0].disposed).toBe(false);
      endAll("a/f2");
      await long;
      await vi.advanceTimersByTimeAsync(2_000);
      expect(made("a/f2")[0]).toMatchObject({ disposed: true, disposedMidCall: false });
      expect(pool.usage()).toMatchObject({ isolates: 0, heapBytes: 0, accountBytes: {} });
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps a function's real isolate through its call while others come and go", async () => {
    const pool = new WarmIsolates({
      heapBudgetBytes: 256 * MIB,
      accountShareBytes: 256 * MIB,
      maxKept: 10,
      idleMs: 600_000,
    });
    const slow =
      "var calls = 0; function main() { calls++; const t = Date.now(); while (Date.now() - t < 300); return calls; }";
    const quick = "function main() { return 1; }";
    const options = (source: string) => ({
      source,
      version: "V4" as const,
      limits: { memoryBytes: 128 * MIB, timeoutMs: 5_000 },
      offThread: true,
      owner: null,
    });
    const long = pool.run({ accountId: "a", functionId: "slow" }, options(slow), { data: "[]" });
    const others = await Promise.all(
      ["q1", "q2", "q3"].map((functionId) => pool.run({ accountId: "b", functionId }, options(quick), { data: "[]" })),
    );
    expect(others.every((o) => o.ok)).toBe(true);
    expect(await long).toMatchObject({ ok: true, resultJson: "1" });
    expect(await pool.run({ accountId: "a", functionId: "slow" }, options(slow), { data: "[]" })).toMatchObject({
      resultJson: "2",
    });
  });
});
