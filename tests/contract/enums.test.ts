// Each enum is declared once, with its labels, in an entity schema; the one an SDL enum is names it
// (`x-graphql`) and `npm run generate` writes its values into the SDL. Another enum of the same values
// in an entity schema is a copy that would drift: it refers to the one declaration instead.
import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, GraphQLEnumType } from "graphql";
import { describe, expect, it } from "vitest";
import { entityEnums, withEntityEnums } from "../../scripts/generate/sdl-enums.ts";
import { EVM_DATASETS } from "../../server/dataplane/datasets/reader.ts";
import { loadEntitySchemas } from "../../server/platform/validation.ts";

const root = path.resolve(import.meta.dirname, "../..");
const sdlText = readFileSync(path.join(root, "schemas/api.graphql"), "utf8");
const sdlEnums = Object.values(buildSchema(sdlText).getTypeMap()).filter(
  (type): type is GraphQLEnumType => type instanceof GraphQLEnumType && !type.name.startsWith("__"),
);
const enums = entityEnums();
const valueSet = (values: readonly string[]) => [...values].sort().join(",");

describe("enums", () => {
  it("are the SDL's as their entity schemas declare them, value for value", () => {
    const declared = enums.filter((e) => e.graphql);
    expect(declared.length).toBeGreaterThan(20);
    for (const e of declared) {
      const sdl = sdlEnums.find((type) => type.name === e.graphql);
      expect(
        sdl?.getValues().map((v) => v.name),
        `${e.file}#${e.pointer}`,
      ).toEqual(e.values);
    }
    expect(withEntityEnums(sdlText)).toBe(sdlText);
  });

  it("are declared once: no other entity enum, and no SDL enum left by hand, has a declared enum's values", () => {
    const declared = new Map(enums.filter((e) => e.graphql).map((e) => [valueSet(e.values), e]));
    const copies = enums
      .filter((e) => !e.graphql && declared.has(valueSet(e.values)))
      .map((e) => `${e.file}#${e.pointer} copies ${declared.get(valueSet(e.values))?.graphql}`);
    expect(copies).toEqual([]);
    const byHand = sdlEnums
      .filter((type) => !enums.some((e) => e.graphql === type.name))
      .filter((type) => enums.some((e) => valueSet(e.values) === valueSet(type.getValues().map((v) => v.name))))
      .map((type) => type.name);
    expect(byHand).toEqual([]);
  });

  it("have a label for every value: the console shows words, never an enum's raw value", () => {
    const schemas = loadEntitySchemas();
    const unlabelled = enums.flatMap((e) => {
      const name = e.file.replace(/^schemas\/entities\/(.*)\.schema\.json$/, "$1");
      const node = e.pointer
        .split("/")
        .slice(1)
        .reduce<unknown>(
          (at, part) => (at as Record<string, unknown>)[part.replace(/~1/g, "/").replace(/~0/g, "~")],
          schemas[name],
        ) as { "x-enumLabels"?: Record<string, string> };
      const labels = node["x-enumLabels"] ?? {};
      return e.values.filter((value) => !labels[value]?.trim()).map((value) => `${e.file}#${e.pointer}: ${value}`);
    });
    expect(unlabelled).toEqual([]);
  });

  it("fail the generator when one names no SDL enum or two name the same", () => {
    const one = { file: "x.schema.json", pointer: "/a", values: ["A"], graphql: "Nowhere" };
    expect(() => withEntityEnums(sdlText, [one])).toThrow(/x-graphql names Nowhere, which is no enum of the SDL/);
    const twice = { ...one, graphql: "LogLevel" };
    expect(() => withEntityEnums(sdlText, [twice, { ...twice, pointer: "/b" }])).toThrow(
      /both declare the SDL enum LogLevel/,
    );
  });
});

describe("the dataset enum", () => {
  const datasets = enums.find((e) => e.graphql === "StreamDataset");
  const stream = JSON.parse(readFileSync(path.join(root, "schemas/entities/stream.schema.json"), "utf8")) as {
    $defs: { dataset: { enum: string[]; "x-enumLabels": Record<string, string> } };
  };

  it("has a label for every value", () => {
    expect(Object.keys(stream.$defs.dataset["x-enumLabels"]).sort()).toEqual([...stream.$defs.dataset.enum].sort());
  });

  it("holds every dataset the data plane reads", () => {
    expect(EVM_DATASETS.filter((dataset) => !datasets?.values.includes(dataset))).toEqual([]);
  });
});

// A value the catalogue gives an endpoint is shown through the endpoint's enum, so its labels cover the catalogue.
describe("the chain compatibility enum", () => {
  it("holds every compatibility of the networks catalogue", () => {
    const endpoint = JSON.parse(readFileSync(path.join(root, "schemas/entities/endpoint.schema.json"), "utf8")) as {
      properties: { chainCompatibility: { enum: string[] } };
    };
    const catalogue = JSON.parse(readFileSync(path.join(root, "schemas/catalogue/networks.json"), "utf8")) as {
      chains: { chainCompatibility: string }[];
    };
    const values = new Set(catalogue.chains.map((chain) => chain.chainCompatibility));
    expect([...values].filter((value) => !endpoint.properties.chainCompatibility.enum.includes(value))).toEqual([]);
  });
});

// A security option is named in three places the console shows: its flag in the options (a title), the
// option enum (labels) and the audit's subjects (labels, plus the RPC methods list). They read alike.
describe("the security option names", () => {
  type Labelled = { enum: string[]; "x-enumLabels": Record<string, string> };
  const entity = (name: string) =>
    JSON.parse(readFileSync(path.join(root, `schemas/entities/${name}.schema.json`), "utf8"));
  const security = entity("security") as {
    $defs: { optionName: Labelled; options: { properties: Record<string, { type: unknown; title: string }> } };
  };
  const subject = (entity("security-audit") as { properties: { subject: Labelled } }).properties.subject;
  const optionName = security.$defs.optionName;
  const flags = Object.entries(security.$defs.options.properties).filter(([, flag]) => flag.type === "boolean");

  it("are one option per flag, each labelled as its flag is titled", () => {
    expect(flags.map(([name]) => name).sort()).toEqual([...optionName.enum].sort());
    for (const [name, flag] of flags) expect(optionName["x-enumLabels"][name], name).toBe(flag.title);
  });

  it("are the audit's subjects, labelled alike", () => {
    expect(subject.enum.filter((name) => name !== "rpcMethods").sort()).toEqual([...optionName.enum].sort());
    for (const name of optionName.enum)
      expect(subject["x-enumLabels"][name], name).toBe(optionName["x-enumLabels"][name]);
  });
});
