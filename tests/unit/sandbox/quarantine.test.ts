import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  filterSandbox,
  logSandboxTo,
  QUARANTINE_MS,
  quarantineOf,
  sandboxProcess,
} from "../../../server/dataplane/sandbox/process.ts";
import { filter } from "./filter-cases.ts";

const MIB = 1024 * 1024;
// One allocation far past the limit: V8 loses control of the isolate, the sandbox process is replaced.
// It comes 100 ms into the call, so two calls started together are both running when the process dies
// (on a loaded machine, the second could otherwise reach the process only after its replacement).
const CRASHES =
  "function main(s) { if (s.data[0] === 'crash') { const t = Date.now(); while (Date.now() - t < 100); new Array(1e8).fill(0) } return 'fine' }";
const limits = { timeoutMs: 500, memoryBytes: 32 * MIB };

describe("filter sandbox: an account whose code crashed a shared sandbox process", () => {
  it("runs its code in the quarantine from then on, where its crashes fail no other account's calls", async () => {
    const attacker = `attacker-${randomUUID()}`;
    const victim = `victim-${randomUUID()}`;
    const told: { lane: string; quarantined: string[] }[] = [];
    logSandboxTo({ warn: (fields: object) => told.push(fields as (typeof told)[number]) });
    // Loaded before the crash and kept, as a warm function's isolate is.
    const kept = await filter(CRASHES, { limits, owner: attacker });
    expect(await kept.run({ data: ["no"] })).toMatchObject({ ok: true, resultJson: '"fine"' });
    const fast = sandboxProcess();
    const generation = fast.generation;

    expect(await kept.run({ data: ["crash"] })).toMatchObject({ ok: false, sandboxLost: "culprit" });
    expect(fast.generation).toBe(generation + 1);
    expect(quarantineOf(attacker)).toBeGreaterThan(Date.now() + QUARANTINE_MS - 60_000);
    expect(quarantineOf(victim)).toBeNull();
    expect(filterSandbox(limits.timeoutMs, false, attacker)).not.toBe(fast);
    expect(filterSandbox(limits.timeoutMs, false, victim)).toBe(fast);

    // The attacker crashes again, twice at once (the kept filter and a new one), while another account's
    // call runs: that call ends well, and the shared process is not replaced.
    const slowVictim = await filter(
      "function main() { const t = Date.now(); while (Date.now() - t < 300); return 'victim' }",
      { owner: victim },
    );
    const again = await filter(CRASHES, { limits, owner: attacker });
    const [victimRun, ...attackerRuns] = await Promise.all([
      slowVictim.run({ data: [] }),
      again.run({ data: ["crash"] }),
      kept.run({ data: ["crash"] }),
    ]);
    expect(victimRun).toMatchObject({ ok: true, resultJson: '"victim"' });
    expect(attackerRuns.map((o) => o.ok)).toEqual([false, false]);
    expect(fast.generation).toBe(generation + 1);
    // Its code still runs, in the quarantine.
    expect(await kept.run({ data: ["no"] })).toMatchObject({ ok: true, resultJson: '"fine"' });
    // The operator's log names the account quarantined, and where each crash happened.
    expect(told.map((t) => [t.lane, t.quarantined])).toEqual([
      ["fast", [attacker]],
      ["quarantine", [attacker]],
    ]);
  }, 30_000);
});
