/**
 * The checked registry, kept beside the service's bundle (`dist-server/registry.json`) with the hash of
 * everything its checks read: the manifests, documents and schemas (screens/, schemas/, api.graphql among
 * them), the code that checks them (server/) and the packages' versions (package-lock.json). A start whose
 * inputs are unchanged byte for byte reads the registry back instead of checking every manifest, entity
 * schema and operation again (~0.8 s of CPU with ajv and graphql); any changed byte checks them all, and
 * a registry that fails its checks is never kept, so an invalid one is refused at every start.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { GraphQLSchema } from "graphql";
import { inputsHash } from "../platform/console-build.ts";
import { SERVER_BUILD_DIR } from "../platform/server-build.mjs";
import { loadRegistry, type Operation, type Registry } from "./registry.ts";

const SNAPSHOT = `${SERVER_BUILD_DIR}/registry.json`;
const checkInputs = ["screens", "schemas", "server", "package-lock.json"];

interface Snapshot {
  inputs: string;
  screens: Registry["screens"];
  operations: Operation[];
  schemas: Registry["schemas"];
}

function readSnapshot(file: string, inputs: string): Registry | null {
  let snapshot: Snapshot;
  try {
    snapshot = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  } catch {
    return null;
  }
  if (snapshot.inputs !== inputs) return null;
  return {
    screens: snapshot.screens,
    operations: new Map(snapshot.operations.map((operation) => [operation.name, operation])),
    schemas: snapshot.schemas,
  };
}

/** The registry as loadRegistry checks it, read from the snapshot when its inputs are unchanged. */
export function checkedRegistry(rootDir: string, apiSchema: GraphQLSchema): Registry {
  const file = path.join(rootDir, SNAPSHOT);
  const inputs = inputsHash(rootDir, checkInputs);
  const kept = readSnapshot(file, inputs);
  if (kept) return kept;
  const registry = loadRegistry(rootDir, apiSchema);
  const snapshot: Snapshot = {
    inputs,
    screens: registry.screens,
    operations: [...registry.operations.values()],
    schemas: registry.schemas,
  };
  // Written whole (a rename): processes starting beside this one read the old snapshot or the new one.
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const staging = `${file}.${process.pid}`;
    writeFileSync(staging, JSON.stringify(snapshot));
    renameSync(staging, file);
  } catch {
    // A read-only checkout: every start checks the registry, as it did before snapshots.
  }
  return registry;
}
