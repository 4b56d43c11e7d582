import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repoRoot = resolve(import.meta.dirname, "../../..");

describe("a supervised child", () => {
  it("ends when its parent went away while it was still starting (the channel closed before it listened)", async () => {
    // The child takes a while before it answers its supervisor, as the engine does while it starts.
    const script = `
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { answerSupervisor } = await import("./server/platform/supervisor.ts");
      answerSupervisor(() => {}, () => { console.log("gone"); process.exit(0); });
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    // The parent's side of the channel closes at once, as a killed parent's does.
    child.disconnect();
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await new Promise<number | null>((done) => child.once("exit", (exitCode) => done(exitCode)));
    clearTimeout(killer);
    expect({ code, output: output.trim() }).toEqual({ code: 0, output: "gone" });
  }, 20_000);
});
