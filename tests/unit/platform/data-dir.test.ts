import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureDataDir } from "../../../server/platform/config.ts";

describe("ensureDataDir", () => {
  let parent = "";
  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), "nodeplane-data-dir-"));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));
  const modeOf = (dir: string) => statSync(dir).mode & 0o777;

  it("makes the data directory passable but not listable by other users (the sandbox's nobody, PostgreSQL's user)", () => {
    const dir = join(parent, "fresh", "data");
    ensureDataDir(dir);
    expect(modeOf(dir)).toBe(0o711);
  });

  it("closes one made open before, keeping what its owner set", () => {
    const dir = join(parent, "old");
    mkdirSync(dir);
    chmodSync(dir, 0o775);
    ensureDataDir(dir);
    expect(modeOf(dir)).toBe(0o711);
    chmodSync(dir, 0o700);
    ensureDataDir(dir);
    expect(modeOf(dir)).toBe(0o700);
  });
});
