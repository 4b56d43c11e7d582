// `npm start` reuses the console build while the inputs it was built from are unchanged, byte for byte.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUILD_STAMP, buildInputsHash, buildStaleness, ensureBuilt } from "../../../server/platform/console-build.ts";

/** A repository with console sources and a build stamped with their hash. */
function builtRepository(): string {
  const root = mkdtempSync(path.join(tmpdir(), "nodeplane-console-build-"));
  mkdirSync(path.join(root, "src/pages"), { recursive: true });
  mkdirSync(path.join(root, "screens"));
  mkdirSync(path.join(root, "dist"));
  writeFileSync(path.join(root, "src/main.tsx"), "export const main = 1;\n");
  writeFileSync(path.join(root, "src/pages/SignIn.tsx"), "export const signIn = 1;\n");
  writeFileSync(path.join(root, "screens/a.screen.json"), "{}\n");
  writeFileSync(path.join(root, "index.html"), "<!doctype html>\n");
  writeFileSync(path.join(root, "dist/index.html"), "<!doctype html>\n");
  writeFileSync(path.join(root, "dist", BUILD_STAMP), `${buildInputsHash(root)}\n`);
  return root;
}

describe("the console build rule", () => {
  it("a build whose stamp matches its inputs is current: ensureBuilt does not build", () => {
    const root = builtRepository();
    expect(buildStaleness(root)).toBeNull();
    // This directory has no package.json: a build would fail, so not throwing shows none ran.
    const lines: string[] = [];
    expect(() => ensureBuilt(root, (line) => lines.push(line))).not.toThrow();
    expect(lines).toEqual([]);
  });

  it("touching an input without changing it keeps the build (a checkout, a copy)", () => {
    const root = builtRepository();
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(root, "src/main.tsx"), later, later);
    expect(buildStaleness(root)).toBeNull();
  });

  it("a changed, added or renamed input makes the build stale", () => {
    const changed = builtRepository();
    writeFileSync(path.join(changed, "src/pages/SignIn.tsx"), "export const signIn = 2;\n");
    expect(buildStaleness(changed)).toMatch(/sources changed/);

    const added = builtRepository();
    writeFileSync(path.join(added, "screens/b.screen.json"), "{}\n");
    expect(buildStaleness(added)).toMatch(/sources changed/);

    const renamed = builtRepository();
    writeFileSync(path.join(renamed, "src/pages/SignIn2.tsx"), "export const signIn = 1;\n");
    writeFileSync(path.join(renamed, "src/pages/SignIn.tsx"), "");
    expect(buildStaleness(renamed)).toMatch(/sources changed/);
  });

  it("a build without a stamp, or no build, is stale; building then fails loudly when it cannot build", () => {
    const unstamped = builtRepository();
    writeFileSync(path.join(unstamped, "dist", BUILD_STAMP), "not the hash\n");
    expect(buildStaleness(unstamped)).toMatch(/sources changed/);

    const missing = mkdtempSync(path.join(tmpdir(), "nodeplane-console-build-"));
    expect(buildStaleness(missing)).toBe("dist/ is missing");
    expect(() => ensureBuilt(missing, () => undefined)).toThrow();
  });
});
