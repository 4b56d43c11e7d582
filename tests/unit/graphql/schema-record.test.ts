// A restart builds the API's schema from the document recorded when its SDL last passed its checks.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildSchema, printSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { apiSdl, schemaOf } from "../../../server/graphql/schema.ts";

const recordFile = () => path.join(mkdtempSync(path.join(tmpdir(), "nodeplane-schema-record-")), "api-schema.json");

describe("the API schema's record", () => {
  it("a schema built from the record is the one built from the SDL, a new object each time", () => {
    const file = recordFile();
    const first = schemaOf(apiSdl(), file);
    const again = schemaOf(apiSdl(), file);
    expect(again).not.toBe(first);
    expect(printSchema(again)).toBe(printSchema(buildSchema(apiSdl())));
    expect(again.getType("Endpoint")).not.toBe(first.getType("Endpoint"));
  });

  it("the record is used for the same SDL only", () => {
    const file = recordFile();
    schemaOf("type Query { a: Int }", file);
    const recorded = JSON.parse(readFileSync(file, "utf8")) as { key: string; document: unknown };
    // What the record holds is what a later start builds: shown by a document the SDL does not say.
    const later = recordFile();
    writeFileSync(later, JSON.stringify({ key: recorded.key, document: buildDocument("type Query { b: Int }") }));
    expect(Object.keys(schemaOf("type Query { a: Int }", later).getQueryType()?.getFields() ?? {})).toEqual(["b"]);
    expect(Object.keys(schemaOf("type Query { c: Int }", later).getQueryType()?.getFields() ?? {})).toEqual(["c"]);
  });

  it("an SDL that fails the schema's checks throws at every call and is never recorded", () => {
    const file = recordFile();
    const invalid = "type Query { a: Thing } interface Thing { id: ID! } type Impl implements Thing { name: String }";
    expect(() => schemaOf(invalid, file)).toThrow(/Thing/);
    expect(() => schemaOf(invalid, file)).toThrow(/Thing/);
    expect(() => readFileSync(file)).toThrow();
  });
});

function buildDocument(sdl: string): unknown {
  const file = recordFile();
  schemaOf(sdl, file);
  return (JSON.parse(readFileSync(file, "utf8")) as { document: unknown }).document;
}
