/**
 * The screens' named operations, typed: the text the console sends for each (the registry's, with the
 * fragments it uses) and its variables and result from `schemas/generated/operations.ts`. A test that
 * runs an operation by name runs what the console runs, and a change to the SDL or to a screen's
 * document that breaks what the test reads fails at type-check time.
 */
import path from "node:path";
import type { OperationName, Operations } from "../../schemas/generated/operations.ts";

export type { OperationName, Operations };
export type VariablesOf<N extends OperationName> = Operations[N]["variables"];
export type ResultOf<N extends OperationName> = Operations[N]["result"];

/** The variables argument: optional where the operation requires none. */
export type VariablesArg<N extends OperationName> =
  Record<string, never> extends VariablesOf<N> ? [variables?: VariablesOf<N>] : [variables: VariablesOf<N>];

const rootDir = path.resolve(import.meta.dirname, "../..");
let documents: Promise<Map<string, string>> | undefined;

/**
 * The document of a named operation, as the registry serves it. The registry is the checked one the
 * service reads at start (its snapshot, when screens/ and schemas/ are unchanged), loaded once per file.
 */
export function operationDocument(name: OperationName): Promise<string> {
  documents ??= (async () => {
    // Imported here: a test file that runs no named operation does not load the registry's checks.
    const { loadApiSchema } = await import("../../server/graphql/schema.ts");
    const { checkedRegistry } = await import("../../server/registry/snapshot.ts");
    const registry = checkedRegistry(rootDir, loadApiSchema());
    return new Map([...registry.operations].map(([key, operation]) => [key, operation.text]));
  })();
  return documents.then((byName) => {
    const text = byName.get(name);
    if (!text) throw new Error(`No operation ${name} in screens/ (run npm run generate after changing a document)`);
    return text;
  });
}
