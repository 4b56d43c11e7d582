/**
 * `npm run generate`: writes every generated file (types made from the contract in `schemas/` and the
 * screens' `.graphql` documents). `npm run generate -- --check` writes nothing and fails, naming each
 * file, when one is missing or stale; the contract suite runs the same check, so CI fails on a stale output.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { generators } from "./generators.ts";

export const repoRoot = path.resolve(import.meta.dirname, "../..");

/** One file a generator makes: its path from the repository root and its whole text. */
export interface GeneratedFile {
  path: string;
  content: string;
}

export type Generator = () => Promise<GeneratedFile[]>;

/** Every generated file, made afresh in memory. */
export async function generateAll(): Promise<GeneratedFile[]> {
  const files = (await Promise.all(generators.map((generate) => generate()))).flat();
  return files;
}

/** The generated files whose checked-in text differs from what the generators make now. */
export async function staleFiles(): Promise<string[]> {
  const stale: string[] = [];
  for (const file of await generateAll()) {
    const target = path.join(repoRoot, file.path);
    if (!existsSync(target) || readFileSync(target, "utf8") !== file.content) stale.push(file.path);
  }
  return stale;
}

async function main(argv: string[]) {
  if (argv.includes("--check")) {
    const stale = await staleFiles();
    if (stale.length) {
      console.error(`Stale generated files (run npm run generate):\n${stale.map((f) => `  ${f}`).join("\n")}`);
      process.exit(1);
    }
    console.log("Generated files are current.");
    return;
  }
  for (const file of await generateAll()) {
    const target = path.join(repoRoot, file.path);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.content);
    console.log(`wrote ${file.path}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main(process.argv.slice(2));
