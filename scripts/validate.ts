/**
 * `npm run validate [-- --junit report.xml] [--root dir]`: checks every screen manifest, entity schema,
 * operation document and form against the API's SDL, without a database or a browser. The rules are the
 * screen registry's own (server/registry/registry.ts and references.ts), the same the service applies at
 * start. Prints one line per problem (file and JSON pointer, or file:line:column in a document, and the
 * reason); exits 1 when there is any. docs/validate.md lists what it checks.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import { buildSchema, type GraphQLSchema } from "graphql";
import { addonCatalogueProblems } from "../server/domains/addons/catalogue-file.ts";
import { catalogueProblems } from "../server/platform/catalogue-data.ts";
import { describeProblem, loadRegistry, type Problem, RegistryError } from "../server/registry/registry.ts";

const SDL = "schemas/api.graphql";
/** The REST API's generated OpenAPI document (scripts/generate/openapi.ts). */
const OPENAPI = "schemas/generated/openapi.json";

export interface ValidationResult {
  /** Every file checked, from the root. */
  files: string[];
  problems: Problem[];
}

/** The files the registry reads, so a report lists the ones that passed too. */
function checkedFiles(rootDir: string): string[] {
  const walk = (dir: string, keep: (name: string) => boolean): string[] =>
    readdirSync(path.join(rootDir, dir))
      .sort()
      .flatMap((name) => {
        const rel = path.join(dir, name);
        if (statSync(path.join(rootDir, rel)).isDirectory()) return walk(rel, keep);
        return keep(name) ? [rel] : [];
      });
  return [
    SDL,
    "schemas/screen.schema.json",
    ...walk("schemas/entities", (name) => name.endsWith(".schema.json")),
    ...walk("screens", (name) => name.endsWith(".graphql") || name.endsWith(".screen.json")),
    ...walk("schemas/catalogue", (name) => name.endsWith(".json")),
  ];
}

export function validateProject(rootDir: string): ValidationResult {
  const files = checkedFiles(rootDir);
  let apiSchema: GraphQLSchema;
  try {
    apiSchema = buildSchema(readFileSync(path.join(rootDir, SDL), "utf8"));
  } catch (error) {
    return { files, problems: [{ file: SDL, pointer: "", reason: (error as Error).message }] };
  }
  // Every catalogue file against the schema beside it; the add-on catalogue also for the names it uses
  // (which repeats its schema's problems: each is reported once).
  const seen = new Set<string>();
  const catalogue: Problem[] = [...addonCatalogueProblems(rootDir), ...catalogueProblems(rootDir)].filter((problem) => {
    const key = `${problem.file} ${problem.pointer} ${problem.reason}`;
    return !seen.has(key) && Boolean(seen.add(key));
  });
  try {
    loadRegistry(rootDir, apiSchema);
    return { files, problems: catalogue };
  } catch (error) {
    if (error instanceof RegistryError) return { files, problems: [...error.problems, ...catalogue] };
    throw error;
  }
}

/**
 * The OpenAPI document's problems, by @seriousme/openapi-schema-validator (the OpenAPI 3.1 meta-schema,
 * with its references resolved): a JSON pointer into the document and the reason for each.
 */
export async function openapiProblems(rootDir: string): Promise<Problem[]> {
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(readFileSync(path.join(rootDir, OPENAPI), "utf8")) as Record<string, unknown>;
  } catch (error) {
    return [{ file: OPENAPI, pointer: "", reason: `cannot be read as JSON: ${(error as Error).message}` }];
  }
  const result = await new Validator().validate(document);
  if (result.valid) return [];
  if (typeof result.errors === "string") return [{ file: OPENAPI, pointer: "", reason: result.errors }];
  return (result.errors ?? []).map((e) => ({
    file: OPENAPI,
    pointer: e.instancePath,
    reason: `${e.message ?? "is not valid"}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`,
  }));
}

/** Everything validate checks: the project's declarations and the OpenAPI document made from them. */
export async function validateAll(rootDir: string): Promise<ValidationResult> {
  const result = validateProject(rootDir);
  return { files: [...result.files, OPENAPI], problems: [...result.problems, ...(await openapiProblems(rootDir))] };
}

const xmlEscape = (text: string) =>
  text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c);

/**
 * A JUnit XML report: one test case per file checked, one failure per problem. A failure's message and
 * type start with where: the JSON pointer in a manifest or schema, `line:column` in a .graphql document.
 */
export function junitReport({ files, problems }: ValidationResult): string {
  const byFile = new Map<string, Problem[]>(files.map((file) => [file, []]));
  for (const problem of problems) byFile.set(problem.file, [...(byFile.get(problem.file) ?? []), problem]);
  const cases = [...byFile].map(([file, found]) => {
    const failures = found.map((p) => {
      const place = p.line !== undefined ? `${p.line}:${p.column ?? 1}` : p.pointer || "/";
      return `      <failure message="${xmlEscape(`${place}: ${p.reason}`)}" type="${xmlEscape(place)}">${xmlEscape(describeProblem(p))}</failure>`;
    });
    const open = `    <testcase classname="nodeplane.validate" name="${xmlEscape(file)}" file="${xmlEscape(file)}"`;
    return failures.length ? `${open}>\n${failures.join("\n")}\n    </testcase>` : `${open}/>`;
  });
  const failed = [...byFile.values()].filter((found) => found.length > 0).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="nodeplane validate" tests="${byFile.size}" failures="${failed}">`,
    `  <testsuite name="nodeplane validate" tests="${byFile.size}" failures="${failed}" errors="0" skipped="0">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at === -1) return undefined;
  const value = argv[at + 1];
  if (!value || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const rootDir = path.resolve(option(argv, "--root") ?? path.resolve(import.meta.dirname, ".."));
  const junit = option(argv, "--junit");
  const result = await validateAll(rootDir);
  for (const p of result.problems) console.error(describeProblem(p));
  if (junit) writeFileSync(junit, junitReport(result));
  if (result.problems.length) {
    console.error(`${result.problems.length} problem(s) in ${result.files.length} files checked.`);
    return 1;
  }
  console.log(`${result.files.length} files checked: no problems.`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main(process.argv.slice(2));
