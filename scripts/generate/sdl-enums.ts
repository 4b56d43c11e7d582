/**
 * The SDL's enums, written from the entity schemas: an enum is declared once, in an entity schema, with
 * its labels (`x-enumLabels`), and names the GraphQL enum it is with `x-graphql`. This generator writes
 * each such enum's values into schemas/api.graphql (the rest of the SDL is written by hand); an SDL enum
 * no entity schema names (an ordering of a list) is left as written.
 */
import { readFileSync } from "node:fs";
import { apiSdlPath } from "../../server/graphql/schema.ts";
import { loadEntitySchemas } from "../../server/platform/validation.ts";
import type { GeneratedFile } from "./index.ts";

/** An enum of an entity schema: where it is, its values and the SDL enum it names, if any. */
export interface EntityEnum {
  file: string;
  pointer: string;
  values: string[];
  graphql: string | null;
}

/** Every enum of strings in the entity schemas, in file and document order. */
export function entityEnums(schemas = loadEntitySchemas()): EntityEnum[] {
  const found: EntityEnum[] = [];
  const walk = (node: unknown, file: string, pointer: string) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, file, `${pointer}/${i}`);
    } else if (node && typeof node === "object") {
      const record = node as Record<string, unknown>;
      const values = record.enum;
      if (Array.isArray(values) && values.every((v) => typeof v === "string"))
        found.push({
          file,
          pointer,
          values,
          graphql: typeof record["x-graphql"] === "string" ? record["x-graphql"] : null,
        });
      for (const [key, value] of Object.entries(record)) walk(value, file, `${pointer}/${key}`);
    }
  };
  for (const [name, schema] of Object.entries(schemas)) walk(schema, `schemas/entities/${name}.schema.json`, "");
  return found;
}

/** `sdl` with the values of every enum an entity schema names written from that schema. */
export function withEntityEnums(sdl: string, enums: EntityEnum[] = entityEnums()): string {
  const claimed = new Map<string, EntityEnum>();
  for (const e of enums) {
    if (!e.graphql) continue;
    const other = claimed.get(e.graphql);
    if (other)
      throw new Error(
        `${e.file}#${e.pointer} and ${other.file}#${other.pointer} both declare the SDL enum ${e.graphql}`,
      );
    claimed.set(e.graphql, e);
  }
  const written = new Set<string>();
  const out = sdl.replace(/^enum (\w+) \{\n([^}]*)\}/gm, (block, name: string, body: string) => {
    const source = claimed.get(name);
    if (!source) return block;
    written.add(name);
    // A value's description, written in the SDL above it, stays with the value.
    const described = new Map<string, string>();
    for (const m of body.matchAll(/((?:[ \t]*"[^"\n]*"\n|[ \t]*"""[\s\S]*?"""\n)?)[ \t]*(\w+)[ \t]*\n/g))
      described.set(m[2], m[1]);
    return `enum ${name} {\n${source.values.map((v) => `${described.get(v) ?? ""}  ${v}\n`).join("")}}`;
  });
  const missing = [...claimed.values()].filter((e) => !written.has(e.graphql ?? ""));
  if (missing.length)
    throw new Error(
      missing
        .map((e) => `${e.file}#${e.pointer}: x-graphql names ${e.graphql}, which is no enum of the SDL`)
        .join("\n"),
    );
  return out;
}

export const generateSdlEnums = async (): Promise<GeneratedFile[]> => [
  { path: "schemas/api.graphql", content: withEntityEnums(readFileSync(apiSdlPath, "utf8")) },
];
