// `npm start` runs the service's bundle only while it was built from the sources as they are now.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ensureServerBuilt,
  SANDBOX_HOST_BUNDLE,
  SERVER_BUNDLE,
  STAGED_BUILD_ENV,
  sandboxHostLaunch,
  serverBuildStaleness,
  stageServerBuild,
} from "../../../server/platform/server-build.mjs";

/** A repository whose server/main.ts prints what it imports and where it is. */
function repository(): string {
  const root = mkdtempSync(path.join(tmpdir(), "nodeplane-server-build-"));
  mkdirSync(path.join(root, "server/platform"), { recursive: true });
  writeFileSync(path.join(root, "package.json"), '{ "type": "module" }\n');
  writeFileSync(
    path.join(root, "server/main.ts"),
    'import { answer, where } from "./platform/answer.ts";\nconsole.log(JSON.stringify({ answer, where, url: import.meta.url }));\n',
  );
  writeFileSync(
    path.join(root, "server/platform/answer.ts"),
    "export const answer: number = 1;\nexport const where = import.meta.dirname;\n",
  );
  return root;
}

/** A repository whose server/main.ts imports its answer lazily (a chunk of its own), as main.ts imports the app. */
function lazyRepository(): string {
  const root = repository();
  writeFileSync(
    path.join(root, "server/main.ts"),
    'const { answer } = await import("./platform/answer.ts");\nconsole.log(JSON.stringify({ answer }));\n',
  );
  return root;
}

const answerSource = (answer: number) =>
  `export const answer: number = ${answer};\nexport const where = import.meta.dirname;\n`;
const installedChunks = (root: string) => readdirSync(path.join(root, "dist-server/chunks")).sort();

const runBundle = (root: string) =>
  JSON.parse(execFileSync(process.execPath, [path.join(root, SERVER_BUNDLE)], { encoding: "utf8" }));

describe("the service's bundle", () => {
  it("is built when missing, then reused; each source keeps its own location", async () => {
    const root = repository();
    expect(serverBuildStaleness(root)).toBe(`${SERVER_BUNDLE} is missing`);
    const lines: string[] = [];
    await ensureServerBuilt(root, (line) => lines.push(line));
    expect(lines).toEqual([`Building the service (${SERVER_BUNDLE} is missing): ${SERVER_BUNDLE}`]);
    expect(serverBuildStaleness(root)).toBeNull();
    expect(runBundle(root)).toEqual({
      answer: 1,
      where: path.join(root, "server/platform"),
      url: `file://${path.join(root, "server/main.ts")}`,
    });
    await ensureServerBuilt(root, (line) => lines.push(line));
    expect(lines).toHaveLength(1);
  });

  it("touching a source without changing it keeps the bundle; a changed byte rebuilds it", async () => {
    const root = repository();
    await ensureServerBuilt(root, () => undefined);
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(root, "server/platform/answer.ts"), later, later);
    expect(serverBuildStaleness(root)).toBeNull();

    writeFileSync(
      path.join(root, "server/platform/answer.ts"),
      "export const answer: number = 2;\nexport const where = import.meta.dirname;\n",
    );
    expect(serverBuildStaleness(root)).toBe("the service's sources changed");
    await ensureServerBuilt(root, () => undefined);
    expect(runBundle(root).answer).toBe(2);
  });

  it("a changed package lock or a source the bundle was built from that is gone makes it stale", async () => {
    const root = repository();
    writeFileSync(path.join(root, "package-lock.json"), "{}\n");
    await ensureServerBuilt(root, () => undefined);
    writeFileSync(path.join(root, "package-lock.json"), '{ "lockfileVersion": 3 }\n');
    expect(serverBuildStaleness(root)).toBe("the service's sources changed");

    const moved = repository();
    await ensureServerBuilt(moved, () => undefined);
    writeFileSync(path.join(moved, "server/main.ts"), 'console.log("{}");\n');
    writeFileSync(path.join(moved, "server/platform/answer.ts"), "");
    expect(serverBuildStaleness(moved)).toBe("the service's sources changed");
  });

  it("records the contents it compiled: a stamp for other contents is stale", async () => {
    const root = repository();
    await ensureServerBuilt(root, () => undefined);
    const stamp = path.join(root, path.dirname(SERVER_BUNDLE), ".inputs.json");
    const recorded = JSON.parse(readFileSync(stamp, "utf8")) as { files: string[] };
    expect(recorded.files).toEqual(["package.json", "server/main.ts", "server/platform/answer.ts"]);
    writeFileSync(stamp, JSON.stringify({ ...recorded, sha256: "0".repeat(64) }));
    expect(serverBuildStaleness(root)).toBe("the service's sources changed");
  });

  it("a build staged by npm start is installed as it is while current, and rebuilt when a source changed since", async () => {
    const root = repository();
    const staged = await stageServerBuild(root);
    expect(serverBuildStaleness(root)).toBe(`${SERVER_BUNDLE} is missing`);
    const lines: string[] = [];
    process.env[STAGED_BUILD_ENV] = staged;
    try {
      await ensureServerBuilt(root, (line) => lines.push(line));
      expect(lines).toEqual([]);
      expect(serverBuildStaleness(root)).toBeNull();
      expect(runBundle(root).answer).toBe(1);

      writeFileSync(
        path.join(root, "server/platform/answer.ts"),
        "export const answer: number = 3;\nexport const where = import.meta.dirname;\n",
      );
      process.env[STAGED_BUILD_ENV] = await stageServerBuild(root);
      writeFileSync(
        path.join(root, "server/platform/answer.ts"),
        "export const answer: number = 4;\nexport const where = import.meta.dirname;\n",
      );
      await ensureServerBuilt(root, (line) => lines.push(line));
      expect(lines).toEqual([`Building the service (the service's sources changed): ${SERVER_BUNDLE}`]);
      expect(runBundle(root).answer).toBe(4);
      expect(existsSync(path.join(root, "dist-server", `.staging-${process.pid}`))).toBe(false);
    } finally {
      delete process.env[STAGED_BUILD_ENV];
    }
  });

  it("the sandbox process runs from its bundle while the bundles are current, else from its source through tsx", async () => {
    const root = repository();
    const host = path.join(root, "server/dataplane/sandbox/host.ts");
    mkdirSync(path.dirname(host), { recursive: true });
    const hostSource = (answer: number) =>
      `const answer: number = ${answer};\nconsole.log(JSON.stringify({ answer, lane: process.argv[2], url: import.meta.url }));\n`;
    writeFileSync(host, hostSource(1));
    const runHost = () => {
      const { args } = sandboxHostLaunch(root);
      return { args, out: JSON.parse(execFileSync(process.execPath, [...args, "fast"], { encoding: "utf8" })) };
    };

    const unbuilt = runHost();
    expect(unbuilt.args).toEqual(["--no-node-snapshot", "--import", expect.stringContaining("tsx"), host]);
    expect(unbuilt.out).toEqual({ answer: 1, lane: "fast", url: `file://${host}` });

    await ensureServerBuilt(root, () => undefined);
    const built = runHost();
    expect(built.args).toEqual(["--no-node-snapshot", path.join(root, SANDBOX_HOST_BUNDLE)]);
    expect(sandboxHostLaunch(root).reads).toEqual([path.join(root, SANDBOX_HOST_BUNDLE)]);
    expect(built.out).toEqual({ answer: 1, lane: "fast", url: `file://${host}` });

    // A changed source is run as it is now, until the bundle is built again.
    writeFileSync(host, hostSource(2));
    const changed = runHost();
    expect(changed.args.at(-1)).toBe(host);
    expect(changed.out.answer).toBe(2);
  });

  it("a source imported lazily is a chunk, installed with its bundle; the replaced build's chunks stay, older ones go", async () => {
    const root = lazyRepository();
    await ensureServerBuilt(root, () => undefined);
    expect(runBundle(root).answer).toBe(1);
    const first = installedChunks(root);
    expect(first).toHaveLength(1);
    expect(readFileSync(path.join(root, SERVER_BUNDLE), "utf8")).not.toContain("export const answer");

    // npm start runs from its staged build: main.ts installs it, then imports the app's chunk from there.
    const runStaged = (staged: string) =>
      JSON.parse(
        execFileSync(process.execPath, [path.join(staged, path.basename(SERVER_BUNDLE))], { encoding: "utf8" }),
      );
    const startWith = async (staged: string) => {
      process.env[STAGED_BUILD_ENV] = staged;
      try {
        await ensureServerBuilt(root, () => undefined);
      } finally {
        delete process.env[STAGED_BUILD_ENV];
      }
    };
    writeFileSync(path.join(root, "server/platform/answer.ts"), answerSource(2));
    const staged = await stageServerBuild(root, "start");
    await startWith(staged);
    expect(runStaged(staged).answer).toBe(2);
    expect(runBundle(root).answer).toBe(2);
    const second = installedChunks(root).filter((chunk) => !first.includes(chunk));
    expect(second).toHaveLength(1);

    // A source changed while that start staged its build: it builds and installs another, and still runs its own.
    writeFileSync(path.join(root, "server/platform/answer.ts"), answerSource(3));
    const stale = await stageServerBuild(root, "start");
    writeFileSync(path.join(root, "server/platform/answer.ts"), answerSource(4));
    await startWith(stale);
    expect(runStaged(stale).answer).toBe(3);
    expect(runBundle(root).answer).toBe(4);
    const fourth = installedChunks(root).filter((chunk) => !first.includes(chunk) && !second.includes(chunk));
    expect(fourth).toHaveLength(1);
    expect(installedChunks(root)).toEqual([...second, ...fourth].sort());

    rmSync(path.join(root, "dist-server/chunks", fourth[0]));
    expect(serverBuildStaleness(root)).toBe(`its chunk ${fourth[0]} is missing`);
  });
});
