import { spawnSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sandboxLaunch } from "../../../server/dataplane/sandbox/confine.ts";
import { logSandboxTo, sandboxProcess } from "../../../server/dataplane/sandbox/process.ts";
import type { FilterHelpers } from "../../../server/dataplane/sandbox/types.ts";
import { failed, filter, filterCases } from "./filter-cases.ts";

filterCases("sandbox process");

describe("filter sandbox: the sandbox process", () => {
  it("gets none of the service's environment: no credential is there for code that got out of V8", async () => {
    process.env.DATABASE_URL_CANARY = "postgres://service:secret@db/nodeplane";
    try {
      // A new process, started with the environment as it is now.
      sandboxProcess().stop();
      const f = await filter("function main() { return typeof process }");
      expect(await f.run({ data: [] })).toMatchObject({ ok: true, resultJson: '"undefined"' });
      const pid = sandboxProcess().pid;
      const names = readFileSync(`/proc/${pid}/environ`, "utf8")
        .split("\0")
        .map((entry) => entry.slice(0, entry.indexOf("=")));
      expect(names).not.toContain("DATABASE_URL_CANARY");
      expect(names).toEqual(expect.arrayContaining(["PATH", "MALLOC_MMAP_THRESHOLD_"]));
    } finally {
      delete process.env.DATABASE_URL_CANARY;
    }
  });

  it("runs as nobody without a network where the machine allows it (code that got out of V8 reaches neither the service's files nor any address), and goes first when memory runs out", async () => {
    const launch = sandboxLaunch();
    const f = await filter("function main() { return 1 }");
    expect(await f.run({ data: [] })).toMatchObject({ ok: true });
    const pid = sandboxProcess().pid as number;
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    expect(uid).toBe(launch.user?.uid ?? process.getuid?.());
    const ownNetwork = readlinkSync(`/proc/${pid}/ns/net`) !== readlinkSync("/proc/self/ns/net");
    expect(ownNetwork).toBe(launch.isolatedNetwork);
    // Its network namespace has the loopback interface only, and it is down: no address answers.
    if (ownNetwork) expect(readFileSync(`/proc/${pid}/net/dev`, "utf8")).not.toMatch(/^\s*(?!lo:)\w+:/m);
    // Out of memory, the kernel ends it first, not the service or its database.
    expect(readFileSync(`/proc/${pid}/oom_score_adj`, "utf8").trim()).toBe("1000");
    // As root, it is confined as far as the machine allows, asked here on its own: a network namespace
    // where one can be made, nobody where nobody can read the sandbox's source (both on this machine).
    if (process.getuid?.() === 0) {
      const canUnshare = spawnSync("unshare", ["--net", "true"]).status === 0;
      const hostSource = fileURLToPath(new URL("../../../server/dataplane/sandbox/host.ts", import.meta.url));
      const nobodyReads =
        spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "cat", hostSource], {
          stdio: "ignore",
        }).status === 0;
      expect(launch.isolatedNetwork).toBe(canUnshare);
      expect(launch.user?.name === "nobody").toBe(nobodyReads);
      expect(launch.shortfall === null).toBe(canUnshare && nobodyReads);
    }
  });

  it("contains a crash of V8: the call fails, the sandbox is replaced, other filters go on", async () => {
    const limits = { timeoutMs: 500, memoryBytes: 32 * 1024 * 1024 };
    // One allocation far past the limit: V8 loses control of the isolate (isolated-vm's "catastrophic"
    // error) and the thread running it never returns.
    const crash = await filter(
      "function main(s) { if (s.data[0] === 'crash') new Array(1e8).fill(0); return 'fine' }",
      {
        limits,
      },
    );
    const bystander = await filter("var n = 0; function main() { return ++n }");
    expect(await bystander.run({ data: [] })).toMatchObject({ resultJson: "1" });
    expect(await crash.run({ data: ["no"] })).toMatchObject({ resultJson: '"fine"' });
    const generation = sandboxProcess().generation;
    // A call sent behind it (see Filter.run) never ran: it is not blamed, but as a call of the filter that
    // crashed the sandbox it is not run again (it could crash the next one): its caller is told to retry.
    const [crashed, behind] = await Promise.all([crash.run({ data: ["crash"] }), crash.run({ data: ["no"] })]);
    // The crash is the culprit's (a stream pauses after two); the call behind it a bystander's (not counted).
    expect(crashed).toMatchObject({ ok: false, sandboxLost: "culprit" });
    expect(failed(crashed).kind).toMatch(/TIMEOUT|MEMORY/);
    expect(failed(crashed).message).toMatch(/sandbox/);
    expect(behind).toMatchObject({ ok: false, sandboxLost: "bystander" });
    expect(failed(behind)).toMatchObject({ kind: "RUNTIME", message: expect.stringMatching(/retry it$/) });
    expect(sandboxProcess().generation).toBe(generation + 1);
    // Both filters load again into the new sandbox process; the bystander's state starts over.
    expect(await crash.run({ data: ["no"] })).toMatchObject({ ok: true, resultJson: '"fine"' });
    expect(await bystander.run({ data: [] })).toMatchObject({ ok: true, resultJson: "1" });
    expect(sandboxProcess().generation).toBe(generation + 1);
  }, 30_000);

  it("in a sandbox that runs calls side by side, a call queued behind its filter's crash does not run after it", async () => {
    // Its 5 s limit puts it in the slow process, where calls of one filter wait their turn in this process.
    const crash = await filter(
      "function main(s) { if (s.data[0] === 'crash') new Array(1e8).fill(0); return 'fine' }",
      { limits: { timeoutMs: 5_000, memoryBytes: 32 * 1024 * 1024 } },
    );
    expect(await crash.check()).toBeNull();
    const slow = sandboxProcess(5_000);
    const generation = slow.generation;
    const [crashed, behind] = await Promise.all([crash.run({ data: ["crash"] }), crash.run({ data: ["no"] })]);
    expect(crashed).toMatchObject({ ok: false, sandboxLost: "culprit" });
    expect(behind).toMatchObject({ ok: false, sandboxLost: "bystander" });
    expect(failed(behind).message).toBe("an earlier call of this filter crashed the sandbox; retry it");
    expect(slow.generation).toBe(generation + 1);
    // A call made after the crash was known runs.
    expect(await crash.run({ data: ["no"] })).toMatchObject({ ok: true, resultJson: '"fine"' });
  }, 30_000);

  it("a fast sandbox that stops answering blames the call it was running, not the calls queued behind it", async () => {
    // Another filter (in the service, another account's) whose call was sent behind the stuck one.
    const stuck = await filter("function main() { return 'stuck' }", {
      limits: { timeoutMs: 300 },
      label: "stream of the stuck filter",
    });
    const told: { fields: object; message: string }[] = [];
    logSandboxTo({ warn: (fields: object, message?: string) => told.push({ fields, message: message ?? "" }) });
    const bystander = await filter("function main() { return 'fine' }", { limits: { timeoutMs: 300 } });
    expect(await stuck.check()).toBeNull();
    expect(await bystander.check()).toBeNull();
    const pid = sandboxProcess().pid as number;
    // The process stops as if V8 could not stop the first call (the watchdog ends it past limit + grace).
    process.kill(pid, "SIGSTOP");
    const first = stuck.run({ data: [] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const behind = bystander.run({ data: [] });
    const [stuckRun, behindRun] = await Promise.all([first, behind]);
    expect(stuckRun).toMatchObject({ ok: false, sandboxLost: "culprit" });
    expect(failed(stuckRun).kind).toBe("TIMEOUT");
    // The call behind it wrote nothing: it ran again in the new sandbox process, its caller saw no failure.
    expect(behindRun).toMatchObject({ ok: true, resultJson: '"fine"' });
    expect(sandboxProcess().pid).not.toBe(pid);
    // The operator's log says why, whom it blamed and what it cost.
    expect(told).toEqual([
      {
        fields: { lane: "fast", blamed: ["stream of the stuck filter"], quarantined: [], failedCalls: 2 },
        message: expect.stringMatching(/^sandbox process replaced: the sandbox process stopped answering/),
      },
    ]);
    expect(await bystander.run({ data: [] })).toMatchObject({ ok: true, resultJson: '"fine"' });
  }, 30_000);

  it("a call that wrote nothing, failed by a sandbox process killed from outside, runs again in a new one", async () => {
    const f = await filter(
      "var n = 0; function main() { n++; console.log('run ' + n); const end = Date.now() + 1000; while (Date.now() < end); return n }",
      { limits: { timeoutMs: 5_000 } },
    );
    expect(await f.check()).toBeNull();
    const pid = sandboxProcess(5_000).pid as number;
    const running = f.run({ data: [] });
    setTimeout(() => process.kill(pid, "SIGKILL"), 300);
    // The first run's isolate went with the process: the run again starts from the code's top level.
    expect(await running).toMatchObject({ ok: true, resultJson: "1", logs: [{ level: "INFO", message: "run 1" }] });
    expect(sandboxProcess(5_000).pid).not.toBe(pid);
  }, 30_000);

  it("a sandbox process that dies during a call that wrote gives that call a clear error and is replaced", async () => {
    const written: string[] = [];
    const helpers = {
      qnAddSet: async (key: string, value: string) => {
        written.push(`${key}=${value}`);
        return true;
      },
    } as unknown as FilterHelpers;
    // It wrote before it was killed: running it again could write twice, so its caller decides.
    const f = await filter(
      "async function main() { await qnLib.qnAddSet('k', 'v'); console.log('spinning'); const end = Date.now() + 2000; while (Date.now() < end); return 1 }",
      { limits: { timeoutMs: 5_000 }, helpers, version: "V5" },
    );
    const ok = await filter("function main() { return 'ok' }");
    expect(await ok.run({ data: [] })).toMatchObject({ ok: true });
    // Its 5 s limit puts it in the slow process (long calls), the other filter in the fast one.
    expect(await f.check()).toBeNull();
    const pid = sandboxProcess(5_000).pid as number;
    const running = f.run({ data: [] });
    setTimeout(() => process.kill(pid, "SIGKILL"), 300);
    const died = await running;
    expect(failed(died)).toMatchObject({ kind: "RUNTIME", message: expect.stringMatching(/exited.*retry/) });
    // Killed from outside, nobody's doing: not billed, not counted against a stream's retries.
    expect(died).toMatchObject({ sandboxLost: "bystander" });
    // What it logged before the process died was sent as it was written.
    expect(died.logs).toEqual([{ level: "INFO", message: "spinning" }]);
    expect(await ok.run({ data: [] })).toMatchObject({ ok: true, resultJson: '"ok"' });
    // Not run again by the sandbox: it wrote once, when its caller ran it.
    expect(written).toEqual(["k=v"]);
    expect(await f.run({ data: [] })).toMatchObject({ ok: true, resultJson: "1" });
    expect(sandboxProcess(5_000).pid).not.toBe(pid);
  }, 30_000);
});
