import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { takeLostFilter } from "../../../server/dataplane/sandbox/in-thread.ts";
import { MEMORY_OVERHEAD_MIB } from "../../../server/dataplane/sandbox/process.ts";

const MIB = 1024 * 1024;
/** What a bomb may touch past the watch between two of its looks (20 ms), as in memory-budget.test.ts. */
const WATCH_SLACK_MIB = 64;
const script = fileURLToPath(new URL("./in-thread-process.ts", import.meta.url));
/** The string-and-parse bomb of the attacker's pass, shaped as a filter. */
const bomb = (count: number) =>
  `function main() { const t = '[' + '1,'.repeat(${count}) + '1]'; return JSON.parse(t).length }`;

/** Runs the filter in a process of its own that runs filters on its thread; its memory before, its peak, how it ended. */
function runInThread(source: string, lostFile: string) {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", script, lostFile, source], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let peakBytes = 0;
  const look = setInterval(() => {
    try {
      const rss = Number(readFileSync(`/proc/${child.pid}/statm`, "utf8").split(" ")[1]) * 4096;
      peakBytes = Math.max(peakBytes, rss);
    } catch {
      // Ended between two looks.
    }
  }, 5);
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise<{ beforeBytes: number; peakBytes: number; signal: string | null; out: string }>((resolve) => {
    child.on("exit", (_code, signal) => {
      clearInterval(look);
      const ready = /^ready (\d+)$/m.exec(out);
      resolve({ beforeBytes: ready ? Number(ready[1]) : Number.NaN, peakBytes, signal, out });
    });
  });
}

describe("sandbox memory on the engine's thread", () => {
  it("a 64 MiB filter building and parsing a 60 MB text grows the process no further than its limit and the stated overhead, and ends it naming the filter and its memory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nodeplane-in-thread-"));
    try {
      const lostFile = join(dir, "lost.json");
      const { beforeBytes, peakBytes, signal, out } = await runInThread(bomb(3e7), lostFile);
      expect(out).toMatch(/^ready \d+$/m);
      // The watch ended the process: the call never answered.
      expect(signal).toBe("SIGKILL");
      // Before: the process grew from 88 MiB to 834 MiB and the call ended TIMEOUT, reporting 0.75 MB used.
      // The watch acts at half the overhead (see UNSEEN_MIB in in-thread.ts); a burst can pass it within a look.
      expect(peakBytes - beforeBytes).toBeLessThanOrEqual((64 + MEMORY_OVERHEAD_MIB + WATCH_SLACK_MIB) * MIB);
      const lost = takeLostFilter(lostFile);
      expect(lost?.label).toBe("stream bomb");
      expect(lost?.reason).toMatch(
        new RegExp(
          `^grew the engine's process by \\d+ MiB while it ran, past its memory limit of 64 MiB and the ${MEMORY_OVERHEAD_MIB / 2} MiB allowed besides`,
        ),
      );
      const grew = Number(/by (\d+) MiB/.exec(lost?.reason ?? "")?.[1]);
      // Past the point the watch acts at, which the message rounds to whole MiB (192.3 reads 192).
      expect(grew).toBeGreaterThanOrEqual(64 + MEMORY_OVERHEAD_MIB / 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("a filter that stays within its limit runs to its end", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nodeplane-in-thread-"));
    try {
      const lostFile = join(dir, "lost.json");
      const { signal, out } = await runInThread(bomb(1e5), lostFile);
      expect(signal).toBeNull();
      expect(out).toContain('"resultJson":"100001"');
      expect(takeLostFilter(lostFile)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
