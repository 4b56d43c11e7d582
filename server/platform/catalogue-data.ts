import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { checkOnce } from "./checked-once.ts";

/**
 * Catalogue data (`schemas/catalogue/<name>.json`) that has a schema beside it (`<name>.schema.json`) is
 * checked against it: by `npm run validate`, and by the service when it reads the file, which refuses
 * data its schema refuses rather than bill from it.
 */
export const catalogueDir = path.resolve(import.meta.dirname, "../../schemas/catalogue");

export interface CatalogueProblem {
  file: string;
  pointer: string;
  reason: string;
}

const ajv = new Ajv2020({ allErrors: true, strict: false });

function problemsOf(rootDir: string, name: string, data: unknown): CatalogueProblem[] {
  const dir = path.join(rootDir, "schemas/catalogue");
  const schema = JSON.parse(readFileSync(path.join(dir, `${name}.schema.json`), "utf8")) as { $id?: string };
  const validate = (schema.$id && ajv.getSchema(schema.$id)) || ajv.compile(schema);
  if (validate(data)) return [];
  return (validate.errors ?? []).map((e) => ({
    file: `schemas/catalogue/${name}.json`,
    pointer: e.instancePath,
    reason: e.message ?? "is not valid",
  }));
}

/** Every catalogue file with a schema, checked (the files without one are not). */
export function catalogueProblems(rootDir: string): CatalogueProblem[] {
  const dir = path.join(rootDir, "schemas/catalogue");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json") && !f.endsWith(".schema.json"))
    .map((f) => f.slice(0, -".json".length))
    .filter((name) => existsSync(path.join(dir, `${name}.schema.json`)))
    .sort()
    .flatMap((name) => problemsOf(rootDir, name, JSON.parse(readFileSync(path.join(dir, `${name}.json`), "utf8"))));
}

/**
 * A catalogue file that has a schema, read and checked: a file its schema refuses stops the caller. The
 * check runs once for the same bytes (checkOnce).
 */
export function readCheckedCatalogue<T>(name: string): T {
  const data = JSON.parse(readFileSync(path.join(catalogueDir, `${name}.json`), "utf8")) as T;
  const rootDir = path.resolve(catalogueDir, "../..");
  checkOnce(rootDir, `catalogue ${name}`, () => {
    const problems = problemsOf(rootDir, name, data);
    if (problems.length > 0) {
      throw new Error(`${problems[0].file} ${problems[0].pointer || "/"}: ${problems[0].reason}`);
    }
  });
  return data;
}
