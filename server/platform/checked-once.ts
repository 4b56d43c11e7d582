/**
 * Checks of the checkout's own data that a start would otherwise repeat (the catalogues against their
 * schemas and references, ~0.35 s of ajv at each start): one that passed is recorded beside the service's
 * bundle (`dist-server/checks-passed.json`) with the hash of everything it can depend on, the catalogue
 * files and their schemas (schemas/), the code that checks them (server/) and the packages' versions
 * (package-lock.json). A start whose inputs are unchanged byte for byte skips the checks that passed on
 * them; any changed byte runs them all again, and a check that fails is never recorded, so bad data is
 * refused at every start (as the registry's snapshot does for the manifests, registry/snapshot.ts).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { inputsHash } from "./console-build.ts";
import { SERVER_BUILD_DIR } from "./server-build.mjs";

const RECORD = `${SERVER_BUILD_DIR}/checks-passed.json`;
const checkInputs = ["schemas", "server", "package-lock.json"];

interface Passed {
  inputs: string;
  checks: string[];
}

/** The inputs' hash, once per process: the checks run as the app's modules load, on the checkout as it was then. */
const hashes = new Map<string, string>();
function inputsOf(rootDir: string): string {
  let hash = hashes.get(rootDir);
  if (hash === undefined) {
    hash = inputsHash(rootDir, checkInputs);
    hashes.set(rootDir, hash);
  }
  return hash;
}

function readPassed(file: string, inputs: string): string[] {
  try {
    const passed = JSON.parse(readFileSync(file, "utf8")) as Passed;
    return passed.inputs === inputs ? passed.checks : [];
  } catch {
    return [];
  }
}

/** Runs `check` (which throws on a problem) unless it passed on these same inputs before. */
export function checkOnce(rootDir: string, name: string, check: () => void): void {
  const file = path.join(rootDir, RECORD);
  const inputs = inputsOf(rootDir);
  if (readPassed(file, inputs).includes(name)) return;
  check();
  // Read again: another check of this start, or another start, may have recorded one meanwhile. Written
  // whole (a rename); two starts writing at once may drop a name, which only runs that check again.
  const passed: Passed = { inputs, checks: [...new Set([...readPassed(file, inputs), name])].sort() };
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const staging = `${file}.${process.pid}`;
    writeFileSync(staging, JSON.stringify(passed));
    renameSync(staging, file);
  } catch {
    // A read-only checkout: every start runs its checks, as it did before.
  }
}
