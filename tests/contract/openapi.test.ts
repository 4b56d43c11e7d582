// The REST API's OpenAPI document: current with its contracts (npm run generate -- --check covers it too),
// valid OpenAPI 3.1 by @seriousme/openapi-schema-validator, and its problems reported by npm run validate
// in the same JUnit report as the manifests'.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openapiDocument } from "../../scripts/generate/openapi.ts";
import { junitReport, openapiProblems, validateAll } from "../../scripts/validate.ts";
import { loadRestOperations } from "../../server/rest/contracts.ts";

const rootDir = path.resolve(import.meta.dirname, "../..");
const documentFile = path.join(rootDir, "schemas/generated/openapi.json");

describe("the OpenAPI document", () => {
  it("is what the contracts make now, and describes every REST operation", () => {
    const written = JSON.parse(readFileSync(documentFile, "utf8"));
    expect(written).toEqual(openapiDocument());
    const described = Object.entries(written.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([, methods]) => Object.values(methods).map((op) => op.operationId),
    );
    expect(described).toEqual(expect.arrayContaining(loadRestOperations().map((op) => op.id)));
  });

  it("is valid OpenAPI 3.1, and validate reports it among the files it checked", async () => {
    expect(await openapiProblems(rootDir)).toEqual([]);
    const result = await validateAll(rootDir);
    expect(result.files).toContain("schemas/generated/openapi.json");
  }, 60_000);

  it("has its problems reported with a pointer, in the JUnit report", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "nodeplane-openapi-"));
    try {
      const broken = JSON.parse(readFileSync(documentFile, "utf8"));
      broken.paths["/endpoints"].get.responses["200"] = { content: "not an object" };
      mkdirSync(path.join(dir, "schemas/generated"), { recursive: true });
      writeFileSync(path.join(dir, "schemas/generated/openapi.json"), JSON.stringify(broken));
      const problems = await openapiProblems(dir);
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.map((p) => p.pointer)).toContain("/paths/~1endpoints/get/responses/200");
      const report = junitReport({ files: ["schemas/generated/openapi.json"], problems });
      expect(report).toContain('failures="1"');
      expect(report).toContain("/paths/~1endpoints/get/responses/200");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
