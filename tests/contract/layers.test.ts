import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The service's layers point one way: platform ← dataplane ← domains ← graphql / registry ← app
 * (an arrow: "is imported by"). The data plane declares ports and never imports a domain; domains supply
 * the adapters; app.ts wires them. A domain's `resolvers.ts` is part of the GraphQL layer. Every import
 * counts, `import type` and dynamic `import()` included.
 *
 * Inside the domain layer, rooms do not lean on each other (docs/decisions/0300-domain-imports.md):
 * - no two domain folders import each other, directly or round a longer loop: where both sides need
 *   each other, the one that needs the other declares a port and the composition supplies the adapter
 *   (as streams/runtime.ts StreamFunctions, filled by functions/stream-port.ts). Every file of a folder
 *   counts here, its resolvers and plugin too: a loop through them ties the rooms together all the same
 *   (docs/decisions/0320-no-cycle-through-resolvers.md);
 * - a domain's `store.ts` (its queries, each taking the account) is its own: another domain reaches its
 *   rows through its service. (A store may still join another domain's table, as SQL does.)
 * - a domain folder that declares a public entry (`index.ts`, as streams/ does) is entered only through
 *   it by other domains.
 * A domain's resolvers (GraphQL layer) compose domains and are outside the last two rules.
 */
const root = path.resolve(import.meta.dirname, "../..");
const serverDir = path.join(root, "server");
const schemasDir = path.join(root, "schemas");

type Layer = "platform" | "dataplane" | "domains" | "registry" | "graphql" | "app";

/** What each layer may import besides itself. */
const mayImport: Record<Layer, Layer[]> = {
  platform: [],
  dataplane: ["platform"],
  domains: ["platform", "dataplane"],
  registry: ["platform", "dataplane", "domains"],
  // The API serves the registry (its resolvers read it), so graphql may import registry, not the other way.
  graphql: ["platform", "dataplane", "domains", "registry"],
  app: ["platform", "dataplane", "domains", "registry", "graphql"],
};

/** The entry points and the wiring: they may import every layer. */
const appFiles = new Set(["app.ts", "main.ts", "own-servers.ts", "seed.ts", "engine.ts", "engine-ports.ts"]);

function layerOf(file: string): Layer | null {
  const rel = path.relative(serverDir, file).split(path.sep).join("/");
  if (appFiles.has(rel)) return "app";
  const parts = rel.split("/");
  const [top, area] = parts;
  // A domain's files may be in a folder of their own inside it (billing/crypto/): named by their file name.
  const name = parts.length > 2 ? parts[parts.length - 1] : undefined;
  if (top === "domains" && name === "resolvers.ts") return "graphql";
  // A domain's plugin is its wiring: it registers the domain's resolvers and routes with what app.ts gives it.
  if ((top === "domains" && name === "plugin.ts") || (top === "registry" && area === "plugin.ts")) return "app";
  if (top === "registry" && area === "resolvers.ts") return "graphql";
  // The REST API runs the GraphQL API's operations (docs/decisions/1710-rest-runs-the-graphql-operations.md).
  if (top === "rest") return "graphql";
  if (top === "platform" || top === "dataplane" || top === "domains" || top === "graphql" || top === "registry")
    return top;
  return null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** Every module specifier in a file: static imports and re-exports (type-only too), import(), import("x").T. */
function specifiersOf(file: string, text = readFileSync(file, "utf8")): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) found.push(argument.text);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) found.push(argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The file a relative specifier names (with or without its extension, or a folder's index.ts). */
function resolveRelative(from: string, specifier: string, files: Set<string>): string {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, "index.ts")]) if (files.has(candidate)) return candidate;
  return base;
}

interface Edge {
  from: string;
  to: string;
  specifier: string;
}

const rel = (file: string) => path.relative(root, file).split(path.sep).join("/");

function importGraph(): Edge[] {
  const files = sourceFiles(serverDir);
  const known = new Set(files);
  return files.flatMap((from) =>
    specifiersOf(from)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => ({ from, specifier, to: resolveRelative(from, specifier, known) })),
  );
}

/** Each broken rule, naming the file, the import and the rule. */
function wrongWayImports(edges: Edge[]): string[] {
  const problems: string[] = [];
  for (const { from, to, specifier } of edges) {
    const fromLayer = layerOf(from);
    if (!fromLayer) {
      problems.push(`${rel(from)}: belongs to no layer (add it to one, or to appFiles if it is an entry point)`);
      continue;
    }
    if (!to.startsWith(serverDir + path.sep)) {
      // Outside server/, only the contract's declarations (schemas/, e.g. its generated types).
      if (!to.startsWith(schemasDir + path.sep))
        problems.push(
          `${rel(from)}: import "${specifier}" reaches ${rel(to)}; outside server/ the service imports only schemas/`,
        );
      continue;
    }
    const toLayer = layerOf(to);
    if (!toLayer) {
      problems.push(`${rel(from)}: import "${specifier}": ${rel(to)} belongs to no layer`);
      continue;
    }
    if (fromLayer === toLayer || mayImport[fromLayer].includes(toLayer)) continue;
    problems.push(
      `${rel(from)}: import "${specifier}" runs the wrong way: ${fromLayer} must not import ${toLayer} (${rel(to)}); ` +
        `${fromLayer} may import ${[fromLayer, ...mayImport[fromLayer]].join(", ")}`,
    );
  }
  return problems;
}

/** Import cycles among the given files (strongly connected components of more than one file, or a self-import). */
function cyclesAmong(edges: Edge[], inScope: (file: string) => boolean): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!inScope(from) || !inScope(to)) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  // Tarjan's algorithm.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.map(rel).sort());
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return cycles;
}

const domainsDir = path.join(serverDir, "domains");

/** The domain folder a domain-layer file lives in (`streams` for server/domains/streams/service.ts), or null. */
function domainOf(file: string): string | null {
  if (layerOf(file) !== "domains") return null;
  const parts = path.relative(domainsDir, file).split(path.sep);
  return parts.length > 1 ? parts[0] : null;
}

/** The domain folder any file under server/domains/<area>/ lives in, whatever its layer (resolvers, plugin), or null. */
function domainFolderOf(file: string): string | null {
  const parts = path.relative(domainsDir, file).split(path.sep);
  return parts.length > 1 && parts[0] !== ".." ? parts[0] : null;
}

/** Imports from one domain folder into another, as edges between the folders (server/domains/<area>). */
function domainEdges(edges: Edge[]): Edge[] {
  return edges.flatMap((edge) => {
    const [from, to] = [domainFolderOf(edge.from), domainFolderOf(edge.to)];
    if (!from || !to || from === to) return [];
    return [{ from: path.join(domainsDir, from), to: path.join(domainsDir, to), specifier: edge.specifier }];
  });
}

/** The file-to-file imports that make up cycles between domain folders, so a failure names what to change. */
function importsWithin(edges: Edge[], cycles: string[][]): string[] {
  const loops = cycles.map((folders) => new Set(folders));
  return edges.flatMap(({ from, to, specifier }) => {
    const [fromFolder, toFolder] = [domainFolderOf(from), domainFolderOf(to)];
    if (!fromFolder || !toFolder || fromFolder === toFolder) return [];
    const [a, b] = [rel(path.join(domainsDir, fromFolder)), rel(path.join(domainsDir, toFolder))];
    return loops.some((loop) => loop.has(a) && loop.has(b)) ? [`${rel(from)} imports "${specifier}"`] : [];
  });
}

/** Imports of another domain's store (its queries), or past its public entry when it declares one. */
function internalImports(edges: Edge[], hasEntry: (domain: string) => boolean): string[] {
  return edges.flatMap(({ from, to, specifier }) => {
    const [fromDomain, toDomain] = [domainOf(from), domainOf(to)];
    if (!fromDomain || !toDomain || fromDomain === toDomain) return [];
    if (hasEntry(toDomain) && path.basename(to) !== "index.ts")
      return [
        `${rel(from)}: import "${specifier}" passes by the ${toDomain} domain's public entry; import its index.ts`,
      ];
    if (path.basename(to) !== "store.ts") return [];
    return [
      `${rel(from)}: import "${specifier}" reaches into the ${toDomain} domain's store; use its service (or a port)`,
    ];
  });
}

describe("server layers", () => {
  const edges = importGraph();

  it("reads the imports it checks (the parser sees every kind)", () => {
    const text = [
      'import a from "./a.ts";',
      'import type { B } from "./b.ts";',
      'export * from "./c.ts";',
      'export { d } from "./d.ts";',
      'const e = await import("./e.ts");',
      'type F = import("./f.ts").F;',
      'import "./g.ts";',
    ].join("\n");
    expect(specifiersOf("x.ts", text)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./g.ts"]);
    expect(edges.length).toBeGreaterThan(100);
  });

  it("names a wrong-way import and a platform cycle (the checks can fail)", () => {
    const at = (p: string) => path.join(serverDir, p);
    const wrong = wrongWayImports([
      {
        from: at("dataplane/metering/meter.ts"),
        to: at("domains/usage/store.ts"),
        specifier: "../../domains/usage/store.ts",
      },
    ]);
    expect(wrong).toEqual([
      'server/dataplane/metering/meter.ts: import "../../domains/usage/store.ts" runs the wrong way: dataplane must not import domains (server/domains/usage/store.ts); dataplane may import dataplane, platform',
    ]);
    expect(
      wrongWayImports([
        { from: at("domains/x/service.ts"), to: at("domains/x/resolvers.ts"), specifier: "./resolvers.ts" },
        { from: at("registry/registry.ts"), to: at("graphql/context.ts"), specifier: "../graphql/context.ts" },
        { from: at("graphql/x.ts"), to: path.join(root, "renderer/types.ts"), specifier: "../../renderer/types.ts" },
        { from: at("registry/registry.ts"), to: path.join(schemasDir, "generated/screen.ts"), specifier: "x" },
      ]),
    ).toHaveLength(3);
    const cycle = cyclesAmong(
      [
        { from: at("platform/mail.ts"), to: at("platform/db/index.ts"), specifier: "./db/index.ts" },
        { from: at("platform/db/index.ts"), to: at("platform/mail.ts"), specifier: "../mail.ts" },
      ],
      () => true,
    );
    expect(cycle).toEqual([["server/platform/db/index.ts", "server/platform/mail.ts"]]);
  });

  it("names a cycle between domain folders and an import of another domain's store (the checks can fail)", () => {
    const at = (p: string) => path.join(serverDir, p);
    const crossing = [
      { from: at("domains/streams/service.ts"), to: at("domains/functions/service.ts"), specifier: "x" },
      { from: at("domains/functions/http.ts"), to: at("domains/streams/service.ts"), specifier: "y" },
      { from: at("domains/webhooks/service.ts"), to: at("domains/streams/store.ts"), specifier: "../streams/store.ts" },
      { from: at("domains/kv/store.ts"), to: at("domains/account/tables.ts"), specifier: "../account/tables.ts" },
      // Resolvers are the GraphQL layer: they compose domains.
      { from: at("domains/usage/resolvers.ts"), to: at("domains/kv/store.ts"), specifier: "../kv/store.ts" },
    ];
    expect(cyclesAmong(domainEdges(crossing), () => true)).toEqual([
      ["server/domains/functions", "server/domains/streams"],
    ]);
    expect(internalImports(crossing, () => false)).toEqual([
      `server/domains/webhooks/service.ts: import "../streams/store.ts" reaches into the streams domain's store; use its service (or a port)`,
    ]);
    expect(internalImports(crossing, (domain) => domain === "streams")).toEqual([
      `server/domains/functions/http.ts: import "y" passes by the streams domain's public entry; import its index.ts`,
      `server/domains/webhooks/service.ts: import "../streams/store.ts" passes by the streams domain's public entry; import its index.ts`,
    ]);
  });

  it("names a cycle between domain folders that runs through a domain's resolvers", () => {
    const at = (p: string) => path.join(serverDir, p);
    const throughResolvers = [
      { from: at("domains/usage/resolvers.ts"), to: at("domains/kv/metering.ts"), specifier: "../kv/metering.ts" },
      { from: at("domains/kv/metering.ts"), to: at("domains/usage/service.ts"), specifier: "../usage/service.ts" },
      { from: at("domains/kv/plugin.ts"), to: at("domains/account/tables.ts"), specifier: "../account/tables.ts" },
    ];
    expect(cyclesAmong(domainEdges(throughResolvers), () => true)).toEqual([
      ["server/domains/kv", "server/domains/usage"],
    ]);
    expect(importsWithin(throughResolvers, [["server/domains/kv", "server/domains/usage"]])).toEqual([
      'server/domains/usage/resolvers.ts imports "../kv/metering.ts"',
      'server/domains/kv/metering.ts imports "../usage/service.ts"',
    ]);
  });

  it("has no import that runs the wrong way", () => {
    expect(wrongWayImports(edges)).toEqual([]);
  });

  it("has no import cycle in server/platform", () => {
    expect(cyclesAmong(edges, (file) => layerOf(file) === "platform")).toEqual([]);
  });

  it("has no import cycle between domain folders", () => {
    expect(domainEdges(edges).length).toBeGreaterThan(10);
    const cycles = cyclesAmong(domainEdges(edges), () => true);
    expect(cycles, `the imports of each loop:\n${importsWithin(edges, cycles).join("\n")}`).toEqual([]);
  });

  it("has no domain reaching into another's store, nor past its public entry", () => {
    expect(internalImports(edges, (domain) => existsSync(path.join(domainsDir, domain, "index.ts")))).toEqual([]);
  });
});
