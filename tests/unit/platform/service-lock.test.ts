import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ServiceLockHeld,
  takeServiceLock,
  takeServiceLockAfterStopping,
} from "../../../server/platform/service-lock.ts";

const repoRoot = resolve(import.meta.dirname, "../../..");
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
};

describe("takeServiceLock", () => {
  let dataDir: string;
  const lockFile = () => join(dataDir, "service.lock");
  const lockContent = () => JSON.parse(readFileSync(lockFile(), "utf8"));
  let sleeper: ChildProcess | null = null;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "nodeplane-lock-unit-"));
  });
  afterEach(() => {
    sleeper?.kill("SIGKILL");
    sleeper = null;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("writes its pid and start time, then its port, and removes the lock on release", () => {
    const lock = takeServiceLock(dataDir);
    expect(lockContent()).toEqual({ pid: process.pid, processStart: startOf(process.pid), port: null });
    lock.recordPort(4321);
    expect(lockContent()).toMatchObject({ pid: process.pid, port: 4321 });
    lock.release();
    expect(existsSync(lockFile())).toBe(false);
    // Nothing but the lock was ever left in the directory.
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("makes a data directory that does not exist yet (a first start)", () => {
    const fresh = join(dataDir, "new", ".data");
    takeServiceLock(fresh).release();
    expect(readdirSync(fresh)).toEqual([]);
  });

  it("refuses while the process the lock names runs, naming its pid and port", () => {
    sleeper = spawn("sleep", ["30"]);
    const pid = sleeper.pid as number;
    writeFileSync(lockFile(), JSON.stringify({ pid, processStart: startOf(pid), port: 8080 }));
    expect(() => takeServiceLock(dataDir)).toThrow(ServiceLockHeld);
    expect(() => takeServiceLock(dataDir)).toThrow(`already running on ${dataDir} (pid ${pid}, port 8080)`);
    expect(lockContent()).toMatchObject({ pid, port: 8080 });
  });

  it("takes over a lock whose process exited, or whose pid now belongs to another process", () => {
    const exited = spawnSync("true").pid;
    sleeper = spawn("sleep", ["30"]);
    const reused = { pid: sleeper.pid, processStart: "1", port: 8080 };
    for (const stale of [{ pid: exited, port: 8080 }, reused, "not a lock"]) {
      writeFileSync(lockFile(), typeof stale === "string" ? stale : JSON.stringify(stale));
      const lock = takeServiceLock(dataDir);
      expect(lockContent()).toMatchObject({ pid: process.pid, port: null });
      lock.release();
    }
  });

  it("removes a takeover mutex left by a start that died during its takeover", () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: spawnSync("true").pid, port: 8080 }));
    writeFileSync(`${lockFile()}.takeover`, JSON.stringify({ pid: spawnSync("true").pid, port: null }));
    const lock = takeServiceLock(dataDir);
    expect(lockContent()).toMatchObject({ pid: process.pid });
    lock.release();
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("lets exactly one of several processes racing for a stale lock take it", async () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: spawnSync("true").pid, port: 8080 }));
    const script = join(dataDir, "race.ts");
    // Each racer says it is loaded, then blocks reading its stdin (no CPU, where spinning until an agreed
    // time kept both cores busy for seconds); the test closes every stdin at once. The winner holds the lock
    // until the test has seen every other racer refused, then releases it when told (SIGTERM), where it
    // held it 5 s.
    writeFileSync(
      script,
      `import { readFileSync, writeSync } from "node:fs";
import { takeServiceLock } from ${JSON.stringify(join(repoRoot, "server/platform/service-lock.ts"))};
let release = () => {};
process.once("SIGTERM", () => {
  release();
  process.exit();
});
writeSync(1, "ready\\n");
readFileSync(0);
try {
  const lock = takeServiceLock(${JSON.stringify(dataDir)});
  console.log("took");
  setInterval(() => {}, 60_000);
  release = () => lock.release();
} catch (error) {
  console.log(error.message);
}
`,
    );
    const racers = Array.from({ length: 6 }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: repoRoot });
      let output = "";
      child.stderr.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      const ready = new Promise<void>((isReady) => {
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          if (output.startsWith("ready\n")) isReady();
        });
        child.once("exit", () => isReady());
      });
      const exited = new Promise<{ pid: number; output: string }>((done) =>
        child.once("exit", () => done({ pid: child.pid as number, output: output.replace(/^ready\n/, "").trim() })),
      );
      return { child, ready, exited };
    });
    await Promise.all(racers.map((racer) => racer.ready));
    for (const racer of racers) racer.child.stdin.end();
    // Every racer but the winner ends by itself; after 20 s without that, the rest are stopped and the
    // assertions below say what went wrong.
    let ended = 0;
    let giveUp: NodeJS.Timeout | undefined;
    await new Promise<void>((allButOne) => {
      giveUp = setTimeout(allButOne, 20_000);
      for (const racer of racers) void racer.exited.then(() => ++ended === racers.length - 1 && allButOne());
    });
    clearTimeout(giveUp);
    for (const { child } of racers) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const results = await Promise.all(racers.map((racer) => racer.exited));
    const winners = results.filter((r) => r.output === "took");
    expect(winners).toHaveLength(1);
    for (const loser of results.filter((r) => r.output !== "took"))
      expect(loser.output).toContain(`already running on ${dataDir} (pid ${winners[0].pid}, starting, no port yet)`);
    expect(existsSync(lockFile())).toBe(false);
  }, 60_000);

  it("a start waits for an owner that records it is stopping to end, and refuses one that is not at once", async () => {
    const lock = takeServiceLock(dataDir);
    lock.recordPort(8080);
    lock.recordStopping();
    expect(lockContent()).toEqual({ pid: process.pid, processStart: startOf(process.pid), port: 8080, stopping: true });
    lock.release();

    sleeper = spawn("sleep", ["30"]);
    const pid = sleeper.pid as number;
    writeFileSync(lockFile(), JSON.stringify({ pid, processStart: startOf(pid), port: 8080 }));
    await expect(takeServiceLockAfterStopping(dataDir, 5_000)).rejects.toThrow(
      `already running on ${dataDir} (pid ${pid}, port 8080)`,
    );

    writeFileSync(lockFile(), JSON.stringify({ pid, processStart: startOf(pid), port: 8080, stopping: true }));
    const waiting = takeServiceLockAfterStopping(dataDir, 5_000);
    let taken = false;
    void waiting.then(() => {
      taken = true;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(taken).toBe(false);
    sleeper.kill("SIGKILL");
    const mine = await waiting;
    expect(lockContent()).toMatchObject({ pid: process.pid, port: null });
    mine.release();

    // One that stays stopping longer than the wait is refused, saying so.
    const stuck = spawn("sleep", ["30"]);
    try {
      const stuckPid = stuck.pid as number;
      writeFileSync(
        lockFile(),
        JSON.stringify({ pid: stuckPid, processStart: startOf(stuckPid), port: 8080, stopping: true }),
      );
      await expect(takeServiceLockAfterStopping(dataDir, 100)).rejects.toThrow(`(pid ${stuckPid}, stopping)`);
    } finally {
      stuck.kill("SIGKILL");
    }
  });
});
