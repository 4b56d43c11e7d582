/**
 * schemas/generated/form-validators.ts: the console's form validators as code made now (ajv's standalone
 * output), so the browser compiles no JSON Schema at run time and the console's CSP needs no
 * 'unsafe-eval'. One validator per form schema the manifests name (`"schema": "stream#/$defs/createInput"`
 * anywhere in a manifest), keyed as the form looks it up (renderer/form/precompiled.ts), and one per
 * sub-schema rjsf checks data against while it draws a form (an `if`, a `oneOf` option).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { deepEquals, hashForSchema, type RJSFSchema, schemaParser } from "@rjsf/utils";
import createAjvInstance from "@rjsf/validator-ajv8/lib/createAjvInstance.js";
import standaloneCode from "ajv/dist/standalone/index.js";
import { formSchemaOf, formValidatorKey } from "../../renderer/form/formSchema.ts";
import { resolveSchemaRef } from "../../renderer/schema.ts";
import type { JsonSchema } from "../../renderer/types.ts";
import { loadEntitySchemas } from "../../server/platform/validation.ts";
import { formatGenerated } from "./format.ts";
import { type GeneratedFile, repoRoot } from "./index.ts";

const OUTPUT = "schemas/generated/form-validators.ts";

/**
 * Every schema reference a manifest names under a `schema` key, wherever the view or action keeps it,
 * but a runner's `outputs`: theirs describe values shown, which no form validates.
 */
export function formSchemaRefs(): string[] {
  const refs = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value && typeof value === "object")
      for (const [key, child] of Object.entries(value)) {
        if (key === "schema" && typeof child === "string" && child.includes("#")) refs.add(child);
        else if (key !== "outputs") visit(child);
      }
  };
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : name.endsWith(".screen.json") ? [full] : [];
    });
  for (const file of walk(path.join(repoRoot, "screens"))) visit(JSON.parse(readFileSync(file, "utf8")));
  return [...refs].sort();
}

/**
 * ajv's standalone output requires its run-time helpers with CommonJS `require` even as an ES module;
 * the console is bundled as ES modules, so each becomes an import. A helper is the module's `default`
 * export, which bundlers and Node hand over differently for a CommonJS module (the function, or an
 * object holding it): `helper` takes the function from whichever came.
 */
function withImports(code: string): string {
  const modules = new Map<string, string>();
  const helpers = new Map<string, string>();
  const body = code
    .replace(/^"use strict";/, "")
    .replace(/require\("([^"]+)"\)(\.default|\.fullFormats)?/g, (_match, module: string, member = "") => {
      const base = path.basename(module).replace(/\W/g, "_");
      const specifier = `${module}.js`;
      if (member === ".fullFormats") {
        modules.set(base, `import { fullFormats as ${base}_fullFormats } from "${specifier}";`);
        return `${base}_fullFormats`;
      }
      if (member !== ".default") throw new Error(`ajv's standalone code requires ${module} unexpectedly`);
      modules.set(base, `import * as ${base}_module from "${specifier}";`);
      helpers.set(base, `const ${base} = helper(${base}_module);`);
      return base;
    });
  const helper = [
    "/** The function a CommonJS module of ajv's exports, as a bundler or Node presents the module. */",
    "function helper(module: any): (...args: unknown[]) => unknown {",
    '  for (let found = module; found; found = found.default) if (typeof found === "function") return found;',
    '  throw new Error("an ajv run-time helper did not load");',
    "}",
  ].join("\n");
  const sorted = (lines: Map<string, string>) => [...lines.values()].sort().join("\n");
  return `${sorted(modules)}\n${helper}\n${sorted(helpers)}\n${body}`;
}

/** The end of the JSON value starting at `start` (an object or array literal as ajv writes it). */
function jsonEnd(code: string, start: number): number {
  let depth = 0;
  for (let at = start; at < code.length; at++) {
    const char = code[at];
    if (char === '"') {
      for (at++; code[at] !== '"'; at++) if (code[at] === "\\") at++;
    } else if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  throw new Error("unterminated JSON in ajv's standalone code");
}

/** Without the schema constants nothing reads (ajv writes one per compiled schema): they are most of the text. */
function withoutUnusedSchemas(code: string): string {
  let out = code;
  for (const [, name] of code.matchAll(/const (schema\d+) = /g)) {
    if ((out.match(new RegExp(`\\b${name}\\b`, "g")) ?? []).length > 1) continue;
    const start = out.indexOf(`const ${name} = `);
    const end = jsonEnd(out, start + `const ${name} = `.length);
    out = out.slice(0, start) + out.slice(out[end] === ";" ? end + 1 : end);
  }
  return out;
}

export async function generateFormValidators(): Promise<GeneratedFile[]> {
  const entities = loadEntitySchemas() as Record<string, JsonSchema>;
  // The entity schemas without `$schema`: rjsf's ajv is draft-07, as the browser's was; `$id` stays, so a
  // form schema's validator is compiled once from its entity, and the `$defs` forms share are compiled once.
  const ajvSchemas: object[] = Object.values(entities).map(({ $schema: _draft, ...schema }: JsonSchema) => schema);
  const forms = new Map<string, { ref: string; required: string[] }>();
  const conditions = new Map<string, RJSFSchema>();
  for (const ref of formSchemaRefs()) {
    const formSchema = formSchemaOf(resolveSchemaRef(entities, ref)) as RJSFSchema;
    const key = formValidatorKey(formSchema);
    const required = formSchema.required ?? [];
    // Schemas that differ only in titles or `required` share a validator: the one requiring least, since
    // the form adds what its schema requires beyond it.
    const known = forms.get(key);
    const subset = (a: string[], b: string[]) => a.every((name) => b.includes(name));
    if (known && !subset(known.required, required) && !subset(required, known.required))
      throw new Error(`${ref} and ${known.ref} differ only in what they require, and neither requires less`);
    if (!known || subset(required, known.required)) forms.set(key, { ref, required });
    const rootKey = hashForSchema(formSchema);
    for (const [hash, schema] of Object.entries(schemaParser(formSchema))) {
      if (hash === rootKey) continue;
      const known = conditions.get(hash);
      if (known && !deepEquals(known, schema)) throw new Error(`Two sub-schemas of forms hash to ${hash}`);
      conditions.set(hash, schema);
    }
  }
  const ajv = createAjvInstance(undefined, undefined, {
    // Without the schemas in each error (rjsf reads a field's title from the form schema instead): they
    // would put a copy of each schema into the console's code.
    verbose: false,
    inlineRefs: false,
    code: { source: true, esm: true, lines: false },
    schemas: [...ajvSchemas, ...conditions.values()],
  });
  const formEntries = [...forms].sort(([a], [b]) => a.localeCompare(b));
  const conditionEntries = [...conditions.keys()].sort();
  const exportNames: Record<string, string> = {};
  formEntries.forEach(([, { ref }], index) => {
    exportNames[`form${index}`] = ref;
  });
  conditionEntries.forEach((hash, index) => {
    exportNames[`condition${index}`] = hash;
  });
  const code = withImports(withoutUnusedSchemas(standaloneCode(ajv, exportNames)));
  const maps = [
    "",
    "/** Each form schema's validator, by its key (the schema without its own `required`), and that `required`. */",
    `export const formValidators: Record<string, { validate: ValidateFunction; required: string[] }> = {`,
    ...formEntries.map(
      ([key, { ref, required }], index) =>
        `  ${JSON.stringify(key)}: { validate: form${index}, required: ${JSON.stringify(required)} }, // ${ref}`,
    ),
    "};",
    "",
    "/** The validators of the sub-schemas rjsf checks data against, by rjsf's hash of each. */",
    "export const conditionValidators: Record<string, ValidateFunction> = {",
    ...conditionEntries.map((hash, index) => `  ${JSON.stringify(hash)}: condition${index},`),
    "};",
    "",
  ].join("\n");
  const source = `// @ts-nocheck ajv's generated code\nimport type { ValidateFunction } from "ajv";\n${code}\n${maps}`;
  return [
    {
      path: OUTPUT,
      content: formatGenerated(OUTPUT, source, "the entity schemas in schemas/entities/ the manifests' forms name"),
    },
  ];
}
