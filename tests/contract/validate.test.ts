import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateProject } from "../../scripts/validate.ts";

const rootDir = path.resolve(import.meta.dirname, "../..");

describe("npm run validate", () => {
  it("passes on the repository's own manifests, documents, entity schemas and forms", () => {
    const result = validateProject(rootDir);
    expect(result.problems).toEqual([]);
    expect(result.files).toEqual(
      expect.arrayContaining(["schemas/api.graphql", "schemas/entities/endpoint.schema.json"]),
    );
    expect(result.files.filter((file) => file.endsWith(".screen.json")).length).toBeGreaterThan(3);
  });

  describe("on a copy with a broken manifest", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "validate-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(path.join(rootDir, "schemas"), path.join(dir, "schemas"), { recursive: true });
    cpSync(path.join(rootDir, "screens"), path.join(dir, "screens"), { recursive: true });
    writeFileSync(path.join(dir, "screens/broken.graphql"), "query BrokenList { tags { id label } }");
    writeFileSync(
      path.join(dir, "screens/broken.screen.json"),
      JSON.stringify({
        version: 1,
        id: "broken",
        route: "/broken",
        title: "Broken",
        nav: { section: "Test", label: "Broken" },
        views: [
          { kind: "list", query: "BrokenList", rows: "tags", columns: [{ field: "/label", widget: "sparkline" }] },
        ],
      }),
    );

    it("prints file, pointer and reason, exits non-zero and writes a JUnit report", () => {
      const report = path.join(dir, "report.xml");
      const run = spawnSync(
        process.execPath,
        ["--import", "tsx", path.join(rootDir, "scripts/validate.ts"), "--root", dir, "--junit", report],
        { cwd: rootDir, encoding: "utf8" },
      );
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('screens/broken.screen.json /views/0/columns/0/widget: "sparkline" is not one of:');
      const xml = readFileSync(report, "utf8");
      expect(xml).toMatch(/<testsuite name="nodeplane validate" tests="\d+" failures="1"/);
      expect(xml).toMatch(
        /<testcase classname="nodeplane.validate" name="screens\/broken.screen.json" file="screens\/broken.screen.json">\s*<failure message="\/views\/0\/columns\/0\/widget: &quot;sparkline&quot; is not one of:/,
      );
      expect(xml).toContain(
        '<testcase classname="nodeplane.validate" name="screens/broken.graphql" file="screens/broken.graphql"/>',
      );
      // A process of its own that loads TypeScript: seconds on a busy machine.
    }, 60_000);
  });
});
