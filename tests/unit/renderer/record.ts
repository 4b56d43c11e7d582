/**
 * Records real service responses as the fixtures of the renderer's conformance test.
 *
 *   npm run build && PORT=8097 NODEPLANE_DATA_DIR=/tmp/np-rec NODEPLANE_DEMO_PASSWORD=demo-password-123 \
 *     node --import tsx server/main.ts &
 *   node --import tsx tests/unit/renderer/record.ts http://localhost:8097 demo-password-123
 *
 * It signs in as the demo owner and viewer, saves both registries, sends a few JSON-RPC calls to the
 * demo endpoints (so usage and error logs have rows), then walks every manifest: route parameters
 * are discovered from the links of recorded rows (rowLink, column links) matched against routes,
 * and every query a manifest names is run with its variables resolved as the renderer would.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { matchPath } from "react-router";
import { fillTemplate, getPath, resolveVariables, type Scope } from "../../../renderer/resolve.ts";
import type { Manifest, Registry, Variables } from "../../../renderer/types.ts";
import { listVariables } from "../../../renderer/views/listState.ts";
import { missingKeys } from "./missing-keys.ts";

const base = process.argv[2] ?? "http://localhost:8097";
const password = process.argv[3] ?? process.env.NODEPLANE_DEMO_PASSWORD ?? "demo-password-123";
const out = path.join(import.meta.dirname, "fixtures");

type Answer = { data?: Record<string, unknown>; errors?: { message: string; extensions?: { code?: string } }[] };

async function session(email: string): Promise<string> {
  const response = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      variables: { e: email, p: password },
    }),
  });
  const cookie = response.headers.get("set-cookie");
  if (!cookie) throw new Error(`Could not sign in as ${email}: ${await response.text()}`);
  return cookie.split(";")[0];
}

async function gql(cookie: string, query: string, variables: Record<string, unknown> = {}): Promise<Answer> {
  const response = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Answer;
}

const owner = await session("demo@nodeplane.local");
const viewer = await session("viewer@nodeplane.local");
const ownerRegistry = await gql(owner, "query Registry { registry { version screens schemas operations locked } }");
const viewerRegistry = await gql(viewer, "query Registry { registry { version screens schemas operations locked } }");
writeFileSync(path.join(out, "registry.owner.json"), `${JSON.stringify(ownerRegistry, null, 2)}\n`);
writeFileSync(path.join(out, "registry.viewer.json"), `${JSON.stringify(viewerRegistry, null, 2)}\n`);
const registry = ownerRegistry.data?.registry as Registry;

// Some traffic, so usage and error logs have rows: a good call and a call to an unknown method.
const urls = await gql(owner, "{ endpoints(first: 5) { edges { node { httpUrl } } } }");
for (const edge of (getPath(urls.data, "endpoints.edges") as { node: { httpUrl: string } }[]) ?? []) {
  for (const method of ["eth_blockNumber", "eth_chainId", "no_such_method"])
    await fetch(edge.node.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
    }).catch(() => undefined);
}
// Metering and logs are written in the background.
await new Promise((resolveDelay) => setTimeout(resolveDelay, 2500));

// Responses recorded earlier (e.g. by another area's recorder with its own data) are kept unless this
// run gets a better one: no errors, and rows where the last had none.
const earlier = existsSync(path.join(out, "responses.json"))
  ? (JSON.parse(readFileSync(path.join(out, "responses.json"), "utf8")) as {
      params?: Record<string, string>;
      responses: Record<string, Answer>;
    })
  : { responses: {} };
// An earlier answer that lacks a key today's document selects was recorded from an older document:
// it is dropped, so the renderer's tests never run against an answer the service can no longer give.
const stale = Object.keys(earlier.responses).filter(
  (name) =>
    !registry.operations[name] || missingKeys(name, registry.operations[name], earlier.responses[name].data).length,
);
const responses: Record<string, Answer> = Object.fromEntries(
  Object.entries(earlier.responses).filter(([name]) => !stale.includes(name)),
);
const params: Record<string, string> = {};
const fresh = new Set<string>();
const isQuery = (name: string) => registry.operations[name]?.trimStart().startsWith("query");

function hasRows(answer: Answer, rows: string | undefined): boolean {
  const found = rows ? getPath(answer.data, rows) : undefined;
  return Array.isArray(found) ? found.length > 0 : Boolean(answer.data);
}

async function record(name: string, variables: Record<string, unknown>, rows?: string): Promise<Answer | undefined> {
  if (!isQuery(name)) return undefined;
  const previous = responses[name];
  if (fresh.has(name) && previous && !previous.errors && hasRows(previous, rows)) return previous;
  const answer = await gql(owner, registry.operations[name], variables);
  const better = !answer.errors && (hasRows(answer, rows) || !previous || !hasRows(previous, rows));
  if (!previous || previous.errors || better) {
    responses[name] = answer;
    fresh.add(name);
  }
  return responses[name];
}

/** Learns route parameters from a link filled with a row, when it matches a screen's route. */
function learn(template: string, row: unknown, scope: Scope) {
  const link = fillTemplate(template, row, false, scope);
  for (const manifest of registry.screens) {
    const match = matchPath(manifest.route, link);
    if (match) for (const [key, value] of Object.entries(match.params)) if (value && !params[key]) params[key] = value;
  }
}

/** Every `query` named anywhere in a view (options sources, custom widget options), with its variables. */
function nestedQueries(value: unknown, found: { query: string; variables?: Variables }[] = []) {
  if (Array.isArray(value)) for (const entry of value) nestedQueries(entry, found);
  else if (value && typeof value === "object") {
    const object = value as Record<string, unknown>;
    if (typeof object.query === "string") found.push({ query: object.query, variables: object.variables as Variables });
    for (const entry of Object.values(object)) nestedQueries(entry, found);
  }
  return found;
}

const ready = (manifest: Manifest) =>
  [...manifest.route.matchAll(/:([A-Za-z0-9_]+)/g)].every(([, name]) => params[name]);
const done = new Set<string>();
for (let round = 0; round < 5; round += 1) {
  for (const manifest of registry.screens) {
    if (done.has(manifest.id) || !ready(manifest)) continue;
    done.add(manifest.id);
    const scope: Scope = { route: { ...params }, query: {}, viewer: {} };
    for (const view of manifest.views) {
      if (view.kind === "list") {
        const answer = await record(view.query, listVariables(view, scope, new URLSearchParams()), view.rows);
        const rows = getPath(answer?.data, view.rows);
        for (const row of Array.isArray(rows) ? rows.slice(0, 1) : []) {
          if (view.rowLink) learn(view.rowLink, row, { ...scope, row });
          for (const column of view.columns) if (column.link) learn(column.link, row, { ...scope, row });
        }
      } else if ("query" in view && view.query) {
        await record(view.query, resolveVariables(view.variables, scope));
      }
      for (const nested of nestedQueries(view.kind === "list" ? [view.filters, view.columns] : view))
        if (nested.query !== ("query" in view ? view.query : undefined))
          await record(nested.query, resolveVariables(nested.variables, scope));
    }
  }
}

const missing = registry.screens.filter((manifest) => !done.has(manifest.id)).map((manifest) => manifest.route);
writeFileSync(
  path.join(out, "responses.json"),
  `${JSON.stringify({ endpointId: params.endpointId, params: { ...earlier.params, ...params }, responses }, null, 2)}\n`,
);
// In the project's JSON format, so the lint stays clean and diffs stay small.
execFileSync("npx", ["biome", "format", "--write", out], { stdio: "ignore" });
console.log(`recorded ${Object.keys(responses).length} queries; parameters ${JSON.stringify(params)}`);
for (const [name, answer] of Object.entries(responses))
  if (answer.errors) console.log(`  ${name}: ${answer.errors[0].extensions?.code} ${answer.errors[0].message}`);
if (missing.length) console.log(`no parameters found for ${missing.join(", ")}`);
if (stale.length) console.log(`dropped earlier answers older than their documents: ${stale.join(", ")}`);
const unrecorded = stale.filter((name) => !responses[name]);
if (unrecorded.length)
  console.log(`  of which not recorded again (run fixtures/record-streams.ts): ${unrecorded.join(", ")}`);
