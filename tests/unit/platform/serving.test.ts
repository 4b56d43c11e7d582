import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { othersServing, registerServing } from "../../../server/platform/serving.ts";

let service: ChildProcess | null = null;
afterEach(() => {
  service?.kill("SIGKILL");
  service = null;
});

/** A process whose command line is a service's (runsService reads it): node with server/main.ts as an argument. */
async function fakeService(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "server/main.ts"]);
  await new Promise((resolve) => child.once("spawn", resolve));
  return child;
}

describe("services running from one checkout", () => {
  it("lists another live service with its port and data directory, not this one, and forgets one that ended", async () => {
    const rootDir = mkdtempSync(path.join(tmpdir(), "nodeplane-serving-"));
    const mine = registerServing(rootDir, "/data/mine");
    mine.recordPort(8080);
    expect(othersServing(rootDir)).toEqual([]);
    service = await fakeService();
    const servingDir = path.join(rootDir, "dist-server", "serving");
    writeFileSync(
      path.join(servingDir, `${service.pid}.json`),
      JSON.stringify({ pid: service.pid, port: 8123, dataDir: "/data/other" }),
    );
    expect(othersServing(rootDir)).toEqual([{ pid: service.pid, port: 8123, dataDir: "/data/other" }]);
    service.kill("SIGKILL");
    await new Promise((resolve) => service?.once("exit", resolve));
    expect(othersServing(rootDir)).toEqual([]);
    expect(readdirSync(servingDir)).toEqual([`${process.pid}.json`]);
    mine.release();
    expect(readdirSync(servingDir)).toEqual([]);
  });

  it("ignores an entry whose pid now runs something that is not the service", async () => {
    const rootDir = mkdtempSync(path.join(tmpdir(), "nodeplane-serving-"));
    registerServing(rootDir, "/data/mine").release();
    service = spawn("sleep", ["30"]);
    await new Promise((resolve) => service?.once("spawn", resolve));
    writeFileSync(
      path.join(rootDir, "dist-server", "serving", `${service.pid}.json`),
      JSON.stringify({ pid: service.pid, port: 1, dataDir: "/x" }),
    );
    expect(othersServing(rootDir)).toEqual([]);
  });
});
