import { readdirSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { buildSchema } from "graphql";
import { describe, expect, test } from "vitest";
import { addAnnotationKeywords } from "../../server/platform/validation.ts";

const schemasDir = resolve(import.meta.dirname, "../../schemas");
const entitiesDir = join(schemasDir, "entities");
const entityFiles = readdirSync(entitiesDir)
  .filter((name) => name.endsWith(".schema.json"))
  .sort();

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, "utf8"));
}

// Strict, so an unknown keyword (a typo) fails here; a `required` naming a property defined elsewhere
// (under oneOf) and union types are legitimate in these schemas, and so are our annotations (how the
// console shows a value: `x-enumLabels`, `x-catalogue`, `x-valueLabels`, `x-unit`), and OpenAPI's `discriminator` (a view is
// chosen by its kind, so a wrong view reports its own errors, not every kind's).
function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    allErrors: true,
    discriminator: true,
  });
  addFormats(ajv);
  addAnnotationKeywords(ajv);
  return ajv;
}

describe("schemas", () => {
  test("screen.schema.json compiles with ajv 2020", () => {
    const ajv = newAjv();
    expect(() => ajv.compile(readJson(join(schemasDir, "screen.schema.json")))).not.toThrow();
  });

  test("there are entity schemas", () => {
    expect(entityFiles.length).toBeGreaterThan(0);
  });

  test.each(entityFiles)("entities/%s compiles and its $id is its file name", (file) => {
    const schema = readJson(join(entitiesDir, file));
    expect(schema.$id).toBe(basename(file, ".schema.json"));
    const ajv = newAjv();
    // The others only as targets of its cross-file $refs.
    for (const other of entityFiles) if (other !== file) ajv.addSchema(readJson(join(entitiesDir, other)));
    expect(() => ajv.compile(schema)).not.toThrow();
  });

  test("x-enumLabels only names values of its enum", () => {
    const problems: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (!node || typeof node !== "object") return;
      const record = node as Record<string, unknown>;
      const labels = record["x-enumLabels"] as Record<string, string> | undefined;
      if (labels) {
        const values = new Set((record.enum as unknown[] | undefined)?.map(String) ?? []);
        for (const key of Object.keys(labels)) if (!values.has(key)) problems.push(`${where}: ${key}`);
      }
      for (const [key, value] of Object.entries(record)) visit(value, `${where}/${key}`);
    };
    for (const file of entityFiles) visit(readJson(join(entitiesDir, file)), file);
    expect(problems).toEqual([]);
  });

  test("all entity schemas compile together (cross-file $refs resolve)", () => {
    const ajv = newAjv();
    for (const file of entityFiles) ajv.addSchema(readJson(join(entitiesDir, file)));
    for (const file of entityFiles) {
      const id = basename(file, ".schema.json");
      expect(() => ajv.getSchema(id), id).not.toThrow();
      expect(ajv.getSchema(id), id).toBeTypeOf("function");
    }
  });

  test("api.graphql parses and builds", () => {
    const sdl = readFileSync(join(schemasDir, "api.graphql"), "utf8");
    const schema = buildSchema(sdl);
    expect(schema.getQueryType()).toBeTruthy();
    expect(schema.getMutationType()).toBeTruthy();
  });
});
