/**
 * schemas/generated/entities.ts: one TypeScript type per `$defs` entry of the entity schemas, and
 * `EntityInputs`, the map from a schema reference (`stream#/$defs/createInput`) to its type, which
 * `validateInput` returns. `$ref`s are resolved here (within a file and across files by `$id`), so
 * each type stands alone; titles are labels for the console, not type names, and are dropped.
 */
import { compile, type JSONSchema } from "json-schema-to-typescript";
import { loadEntitySchemas } from "../../server/platform/validation.ts";
import { formatGenerated } from "./format.ts";
import type { GeneratedFile } from "./index.ts";

const OUTPUT = "schemas/generated/entities.ts";

type Schemas = ReturnType<typeof loadEntitySchemas>;

const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join("");

function resolvePointer(root: unknown, pointer: string): unknown {
  let node = root;
  for (const token of pointer.split("/").filter(Boolean)) {
    node = (node as Record<string, unknown> | undefined)?.[token.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  if (node === undefined) throw new Error(`Unresolved $ref pointer ${pointer}`);
  return node;
}

/** The schema with every `$ref` replaced by what it points to, and no titles or annotations of ours. */
function inline(schemas: Schemas, file: string, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => inline(schemas, file, item));
  if (!node || typeof node !== "object") return node;
  const object = node as Record<string, unknown>;
  if (typeof object.$ref === "string") {
    const [target, pointer = ""] = object.$ref.split("#");
    const targetFile = target || file;
    const { $ref: _ref, ...siblings } = object;
    const resolved = inline(schemas, targetFile, resolvePointer(schemas[targetFile], pointer)) as object;
    return { ...(inline(schemas, file, siblings) as object), ...resolved };
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (key === "title" || key.startsWith("x-") || key === "$id" || key === "$schema" || key === "$defs") continue;
    // `properties` maps names to schemas: a property called "title" is kept.
    copy[key] =
      key === "properties"
        ? Object.fromEntries(
            Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, inline(schemas, file, sub)]),
          )
        : inline(schemas, file, value);
  }
  return copy;
}

export async function generateEntityTypes(): Promise<GeneratedFile[]> {
  const schemas = loadEntitySchemas();
  const declarations: string[] = [];
  const refs: string[] = [];
  for (const file of Object.keys(schemas).sort()) {
    const defs = (schemas[file].$defs ?? {}) as Record<string, unknown>;
    for (const def of Object.keys(defs).sort()) {
      const name = pascal(file) + pascal(def);
      const schema = inline(schemas, file, defs[def]) as JSONSchema;
      declarations.push(
        await compile(schema, name, {
          bannerComment: "",
          additionalProperties: true,
          format: false,
          unknownAny: true,
          strictIndexSignatures: true,
        }),
      );
      refs.push(`  "${file}#/$defs/${def}": ${name};`);
    }
  }
  const source = [
    ...declarations,
    "/** Every entity schema reference `validateInput` accepts, and the type of what it checks. */",
    `export interface EntityInputs {\n${refs.join("\n")}\n}\n`,
    "export type EntityInputRef = keyof EntityInputs;\n",
  ].join("\n");
  return [{ path: OUTPUT, content: formatGenerated(OUTPUT, source, "schemas/entities/*.schema.json") }];
}
