import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createFilter } from "../../../server/dataplane/sandbox/filter.ts";
import { MEMORY_OVERHEAD_MIB, type SandboxProcess, sandboxProcess } from "../../../server/dataplane/sandbox/process.ts";

const MIB = 1024 * 1024;
/**
 * What the watchdog may miss between two of its looks (20 ms): the bombs grew the process by at most
 * ~700 MB a second here, and this test reads it as often.
 */
const WATCH_SLACK_MIB = 64;

/** The string-and-parse bomb of the attacker's pass: a 120 MB text in V8's heap, parsed with 1.4 GB outside it. */
const bomb = (count: number) =>
  `function main() { const t = '[' + '1,'.repeat(${count}) + '1]'; return JSON.parse(t).length }`;

/** The most memory (MiB) a lane's process held while `work` ran, read from /proc every 5 ms. */
async function peakResidentMiB<T>(lane: SandboxProcess, work: Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = 0;
  const look = () => {
    const pid = lane.pid;
    if (pid === undefined) return;
    try {
      peak = Math.max(peak, (Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * 4096) / MIB);
    } catch {
      // Killed between reading its pid and its memory.
    }
  };
  const timer = setInterval(look, 5);
  try {
    const result = await work;
    return { peak, result };
  } finally {
    clearInterval(timer);
  }
}

describe("sandbox memory: the process, not only V8's heap", () => {
  it("three 128 MB functions building and parsing a 120 MB text at once keep the sandbox process within their limits' sum and the stated overhead, and fail with MEMORY", async () => {
    const limits = { timeoutMs: 30_000, memoryBytes: 128 * MIB };
    const filters = await Promise.all(
      [1, 2, 3].map(() => createFilter({ source: bomb(6e7), limits, offThread: true, owner: null })),
    );
    const lane = sandboxProcess(limits.timeoutMs);
    const { peak, result } = await peakResidentMiB(lane, Promise.all(filters.map((f) => f.run({ data: [] }))));
    for (const f of filters) f.dispose();
    // Before: each grew the process by ~1.5 GB (4.9 GB for three) and answered 60000001 with 1 MB used.
    expect(peak).toBeLessThanOrEqual(3 * 128 + MEMORY_OVERHEAD_MIB + WATCH_SLACK_MIB);
    const failures = result.filter((o) => !o.ok);
    expect(failures.length).toBeGreaterThan(0);
    for (const outcome of result) {
      if (outcome.ok) continue;
      // Every call was either blamed (MEMORY, with the growth it saw) or failed alongside one that was.
      expect(outcome.error.kind === "MEMORY" || /retry it$/.test(outcome.error.message)).toBe(true);
    }
    const blamed = failures.filter((o) => !o.ok && o.error.kind === "MEMORY");
    expect(blamed.length).toBeGreaterThan(0);
    for (const o of blamed) {
      if (o.ok) continue;
      expect(o.error.message).toMatch(/grew by \d+ MiB/);
      // What it used is reported: the growth of the process, not the 1 MB of heap left after the call.
      expect(o.memoryBytes).toBeGreaterThan(128 * MIB);
    }
  }, 120_000);

  it("a 64 MiB filter's bomb in the process every account's filter tests share grows it no further than the budget", async () => {
    const lane = sandboxProcess();
    const f = await createFilter({ source: bomb(3e7), limits: { timeoutMs: 1_000 }, owner: null });
    const { peak, result } = await peakResidentMiB(lane, f.run({ data: [] }));
    f.dispose();
    // Before: 574 MB here (711 MB in the attacker's pass), a TIMEOUT once the process stopped answering.
    expect(peak).toBeLessThanOrEqual(64 + MEMORY_OVERHEAD_MIB + WATCH_SLACK_MIB);
    // The parser does not stop at V8's time limit: on a loaded machine the watchdog's time check can come
    // first (the process held no more than the budget either way).
    expect(result).toMatchObject({ ok: false, error: { kind: expect.stringMatching(/^(MEMORY|TIMEOUT)$/) } });
  }, 60_000);
});
