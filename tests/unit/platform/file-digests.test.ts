// A start's input hashes read a file again only when its stat changed, and never trust a stat that a
// change within the file system's timestamp granularity could repeat.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { contentsDigest, fileDigests } from "../../../server/platform/file-digests.mjs";

const module = path.resolve(import.meta.dirname, "../../../server/platform/file-digests.mjs");
const record = (root: string) => path.join(root, "dist-server/.file-digests.json");

/** The digests as a new process (a later start) finds them. */
const digestsInNewProcess = (root: string, files: string[]): string[] =>
  JSON.parse(
    execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { fileDigests } = await import(${JSON.stringify(module)}); console.log(JSON.stringify(fileDigests(${JSON.stringify(root)}, ${JSON.stringify(files)})));`,
      ],
      { encoding: "utf8" },
    ),
  );

describe("file digests", () => {
  it("a file rewritten at once with the same size is read again", () => {
    const root = mkdtempSync(path.join(tmpdir(), "nodeplane-file-digests-"));
    const file = path.join(root, "a.txt");
    writeFileSync(file, "one");
    expect(fileDigests(root, ["a.txt"])).toEqual([contentsDigest("one")]);
    writeFileSync(file, "two");
    expect(fileDigests(root, ["a.txt"])).toEqual([contentsDigest("two")]);
    expect(digestsInNewProcess(root, ["a.txt"])).toEqual([contentsDigest("two")]);
  });

  it("a settled file is not read again while its stat is unchanged; touching it reads it again", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "nodeplane-file-digests-"));
    writeFileSync(path.join(root, "a.txt"), "one");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(digestsInNewProcess(root, ["a.txt"])).toEqual([contentsDigest("one")]);
    const kept = JSON.parse(readFileSync(record(root), "utf8")) as Record<string, [string, string]>;
    expect(kept["a.txt"][1]).toBe(contentsDigest("one"));

    // What the record says is what a start uses: shown by a digest the contents cannot have.
    writeFileSync(record(root), JSON.stringify({ "a.txt": [kept["a.txt"][0], "recorded"] }));
    expect(digestsInNewProcess(root, ["a.txt"])).toEqual(["recorded"]);

    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(root, "a.txt"), later, later);
    expect(digestsInNewProcess(root, ["a.txt"])).toEqual([contentsDigest("one")]);
  });

  it("a file that is gone throws", () => {
    const root = mkdtempSync(path.join(tmpdir(), "nodeplane-file-digests-"));
    expect(() => fileDigests(root, ["missing.txt"])).toThrow();
  });
});
