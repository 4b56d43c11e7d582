/**
 * The service as a separate OS process (`node server/start.mjs`: its bundle when `npm test` has built it
 * current, else its sources through tsx), for tests about several processes sharing
 * state (a database, Redis, a data directory). It prints its URL once listening; stop() sends SIGTERM and
 * waits. A NODEPLANE_DATA_DIR in `env` is the caller's and is kept; otherwise a temporary one is made and removed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_EGRESS_ALLOW } from "./egress.ts";
import { TEST_SIGNUPS_PER_HOUR } from "./signups.ts";

export interface ServiceProcess {
  url: string;
  pid: number;
  /** SIGTERM, then its exit code (null when a signal ended it) and all it printed. */
  stop(): Promise<{ code: number | null; output: string }>;
}

const repoRoot = join(import.meta.dirname, "..", "..");

/** `nodeArgs` go to node before the script (`--cpu-prof` to profile the service). */
export async function startServiceProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  const ownDataDir = env.NODEPLANE_DATA_DIR ? null : mkdtempSync(join(tmpdir(), "nodeplane-process-"));
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, "server/start.mjs"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      ...(ownDataDir ? { NODEPLANE_DATA_DIR: ownDataDir } : {}),
      NODEPLANE_DEMO_PASSWORD: "demo-password-for-tests",
      LOG_LEVEL: "warn",
      NODEPLANE_EGRESS_ALLOW: TEST_EGRESS_ALLOW,
      NODEPLANE_SIGNUPS_PER_HOUR: TEST_SIGNUPS_PER_HOUR,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const stopped = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const cleanUp = () => {
    if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the service did not start in ${timeoutMs} ms:\n${output}`)),
        timeoutMs,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /running at (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1].replace("localhost", "127.0.0.1"));
        }
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the service exited with ${code} before listening:\n${output}`));
      });
    });
    return {
      url,
      pid: child.pid as number,
      async stop() {
        child.kill("SIGTERM");
        const code = await stopped;
        cleanUp();
        return { code, output };
      },
    };
  } catch (error) {
    child.kill("SIGKILL");
    await stopped;
    cleanUp();
    throw error;
  }
}
