// A start reads the checked registry back only while everything its checks read is unchanged.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { SERVER_BUILD_DIR } from "../../server/platform/server-build.mjs";
import { loadRegistry, RegistryError } from "../../server/registry/registry.ts";
import { checkedRegistry } from "../../server/registry/snapshot.ts";

const rootDir = path.resolve(import.meta.dirname, "../..");
const apiSchema = loadApiSchema();

describe("the registry snapshot", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function copy() {
    dir = mkdtempSync(path.join(tmpdir(), "registry-snapshot-"));
    for (const input of ["schemas", "screens"])
      cpSync(path.join(rootDir, input), path.join(dir, input), { recursive: true });
    return path.join(dir, SERVER_BUILD_DIR, "registry.json");
  }

  it("is the checked registry, kept and read back while the inputs are unchanged", () => {
    const file = copy();
    const checked = checkedRegistry(dir, apiSchema);
    expect(checked).toEqual(loadRegistry(dir, apiSchema));
    // A mark only the snapshot holds: the next start returns it, so it read the snapshot.
    const snapshot = JSON.parse(readFileSync(file, "utf8"));
    snapshot.screens[0].file = "read from the snapshot";
    writeFileSync(file, JSON.stringify(snapshot));
    expect(checkedRegistry(dir, apiSchema).screens[0].file).toBe("read from the snapshot");
  });

  it("a changed byte checks everything again: a registry broken since is refused, and not kept", () => {
    const file = copy();
    checkedRegistry(dir, apiSchema);
    const kept = readFileSync(file, "utf8");
    const manifest = path.join(dir, "screens/endpoints/list.screen.json");
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace('"query": "', '"query": "Missing'));
    expect(() => checkedRegistry(dir, apiSchema)).toThrow(RegistryError);
    expect(readFileSync(file, "utf8")).toBe(kept);
  });
});
