// The dataset enum is declared once, with its labels, in the stream entity schema. The SDL has to spell
// its own enum and the data plane names the datasets it can read; both must agree with that one.
import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, type GraphQLEnumType } from "graphql";
import { describe, expect, it } from "vitest";
import { EVM_DATASETS } from "../../server/dataplane/datasets/reader.ts";

const root = path.resolve(import.meta.dirname, "../..");
const stream = JSON.parse(readFileSync(path.join(root, "schemas/entities/stream.schema.json"), "utf8")) as {
  $defs: { dataset: { enum: string[]; "x-enumLabels": Record<string, string> } };
};
const datasets = stream.$defs.dataset;

describe("the dataset enum", () => {
  it("has a label for every value", () => {
    expect(Object.keys(datasets["x-enumLabels"]).sort()).toEqual([...datasets.enum].sort());
  });

  it("is the SDL's StreamDataset, value for value", () => {
    const sdl = buildSchema(readFileSync(path.join(root, "schemas/api.graphql"), "utf8"));
    const values = (sdl.getType("StreamDataset") as GraphQLEnumType).getValues().map((value) => value.name);
    expect(values.sort()).toEqual([...datasets.enum].sort());
  });

  it("holds every dataset the data plane reads", () => {
    expect(EVM_DATASETS.filter((dataset) => !datasets.enum.includes(dataset))).toEqual([]);
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
