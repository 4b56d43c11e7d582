import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxSuspects, SUSPECT_MS } from "../../../server/dataplane/engine/suspects.ts";

const dirs: string[] = [];
const fileIn = () => {
  const dir = mkdtempSync(join(tmpdir(), "nodeplane-suspects-"));
  dirs.push(dir);
  return join(dir, "engine-suspects.json");
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const CRASHES = "function main(s) { new Array(1e9).fill(0) }";
const culprit = { id: "s-1", accountId: "a-1", filterFunction: CRASHES };
const sibling = { id: "s-2", accountId: "a-1", filterFunction: null };
const stranger = { id: "s-3", accountId: "a-2", filterFunction: CRASHES };

describe("filters that ended an engine, remembered for the engines after it", () => {
  it("names the culprit stream and, as suspects too, its account's other streams; no other account's", () => {
    const file = fileIn();
    const now = 1_000_000;
    SandboxSuspects.load(file, now).add(culprit, "held the engine's thread", now);
    // A later engine (restarted for any reason) reads the same file.
    const later = SandboxSuspects.load(file, now + 60_000);
    expect(later.of(culprit, now + 60_000)).toEqual({ reason: "held the engine's thread", culprit: true });
    expect(later.of(sibling, now + 60_000)).toEqual({
      reason: "another filter of this account ended the engine's process",
      culprit: false,
    });
    expect(later.of(stranger, now + 60_000)).toBeNull();
  });

  it("no longer takes the stream for the culprit once its filter was changed; its account stays a suspect", () => {
    const file = fileIn();
    SandboxSuspects.load(file, 0).add(culprit, "held the engine's thread", 0);
    const fixed = { ...culprit, filterFunction: "function main(s) { return s.data }" };
    expect(SandboxSuspects.load(file, 1).of(fixed, 1)).toEqual({
      reason: "another filter of this account ended the engine's process",
      culprit: false,
    });
  });

  it("forgets them after SUSPECT_MS", () => {
    const file = fileIn();
    SandboxSuspects.load(file, 0).add(culprit, "made V8 lose control of its isolate", 0);
    expect(SandboxSuspects.load(file, SUSPECT_MS - 1).of(sibling, SUSPECT_MS - 1)).not.toBeNull();
    const expired = SandboxSuspects.load(file, SUSPECT_MS);
    expect(expired.of(culprit, SUSPECT_MS)).toBeNull();
    expect(expired.of(sibling, SUSPECT_MS)).toBeNull();
    // Dropped from the file at the next write.
    expired.add(stranger, "held the engine's thread", SUSPECT_MS);
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).streams)).toEqual(["s-3"]);
  });

  it("starts with none when the file is missing or torn", () => {
    const file = fileIn();
    expect(SandboxSuspects.load(file).of(culprit)).toBeNull();
    writeFileSync(file, '{"streams":{"s-1":{"reas');
    expect(SandboxSuspects.load(file).of(culprit)).toBeNull();
  });
});
