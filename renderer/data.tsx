// The GraphQL data layer: one transport (a JSON POST to /graphql on the same origin, the session
// travels in an HttpOnly cookie), operation documents looked up by name in the registry,
// SWR for caching, de-duplication and refreshes by operation name.
import { createContext, type ReactNode, useCallback, useContext, useMemo } from "react";
import useSWR, { type Cache, preload, type SWRConfiguration, unstable_serialize, useSWRConfig } from "swr";
import { formatValue } from "./format.ts";
import { fieldSchema } from "./schema.ts";
import { GqlError, REGISTRY_DOCUMENT, type Transport } from "./transport.ts";
import type { JsonSchema, Registry, Viewer } from "./types.ts";

interface DataContextValue {
  transport: Transport;
  registry: Registry;
  viewer: Viewer;
}

const DataContext = createContext<DataContextValue | null>(null);

export function DataProvider(props: { transport: Transport; registry: Registry; viewer: Viewer; children: ReactNode }) {
  const value = useMemo(
    () => ({ transport: props.transport, registry: props.registry, viewer: props.viewer }),
    [props.transport, props.registry, props.viewer],
  );
  return <DataContext.Provider value={value}>{props.children}</DataContext.Provider>;
}

/** A function that shows a value as people read it, by its schema, with this registry's catalogue names. */
export function useFormat(): (value: unknown, schema: JsonSchema | undefined) => string {
  const catalogue = useContext(DataContext)?.registry.catalogue;
  return useCallback((value, schema) => formatValue(value, schema, catalogue), [catalogue]);
}

/** How a value at a dotted path of an entity's record reads, for titles filled from a template. */
export function useRecordFormat(entityName: string | undefined): (value: unknown, path: string) => string {
  const registry = useContext(DataContext)?.registry;
  const format = useFormat();
  return useCallback(
    (value, path) => {
      const entity = entityName ? registry?.schemas[entityName] : undefined;
      return format(value, fieldSchema(entity, `/${path.split(".").join("/")}`, registry?.schemas));
    },
    [entityName, registry, format],
  );
}

export function useData(): DataContextValue {
  const value = useContext(DataContext);
  if (!value) throw new Error("useData needs a DataProvider");
  return value;
}

/** Loads the registry for the signed-in viewer. */
const REGISTRY_KEY = ["registry"];
const registryFetcher = (transport: Transport) => async () => (await transport(REGISTRY_DOCUMENT)).registry as Registry;

export function useRegistryQuery(transport: Transport, enabled: boolean) {
  return useSWR<Registry, GqlError>(enabled ? REGISTRY_KEY : null, registryFetcher(transport), {
    revalidateOnFocus: false,
  });
}

/** A registry query started with the viewer's (speculateRegistry), for the next preloadRegistry to take. */
let speculated: Promise<Registry> | null = null;

/**
 * Starts the registry query together with the viewer's, on a page that expects someone signed in, so the
 * first screen waits one round trip fewer (its answer is not cached until the viewer answers). Asked
 * with a transport that does not sign anyone out: when no one is signed in it fails, unused.
 */
export function speculateRegistry(transport: Transport): void {
  speculated = registryFetcher(transport)();
  speculated.catch(() => undefined);
  void import("./preload.ts").catch(() => undefined);
}

/**
 * Starts the registry query as soon as someone is known to be signed in, so it runs while the signed-in
 * console's code downloads; the first useRegistryQuery takes its answer. A query speculateRegistry started
 * is taken instead, and asked again when it failed (no one was signed in when it was asked). When it
 * answers, the screen at the browser's address gets its views' code started (renderer/preload.ts, a
 * small module fetched meanwhile). Not when the registry is already in the cache (a signed-in viewer
 * checked again): an answer started then would wait, unused, for the next sign-in.
 */
export function preloadRegistry(transport: Transport, cache: Cache, viewer: Viewer): void {
  const started = speculated;
  speculated = null;
  if (cache.get(unstable_serialize(REGISTRY_KEY))?.data) return;
  const fetchRegistry = registryFetcher(transport);
  const screenPreload = import("./preload.ts");
  void Promise.all([preload(REGISTRY_KEY, () => started?.catch(fetchRegistry) ?? fetchRegistry()), screenPreload])
    .then(([registry, { preloadScreen }]) => preloadScreen(registry, viewer, window.location))
    .catch(() => undefined);
}

function documentFor(registry: Registry, name: string): string {
  const document = registry.operations[name];
  if (!document) throw new GqlError(`The operation ${name} is not in the registry.`, "INTERNAL");
  return document;
}

const SCALAR_FROM_TEXT: Record<string, (text: string) => unknown> = {
  Int: (text) => (/^-?\d+$/.test(text) ? Number(text) : text),
  Float: (text) => (text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text),
  Boolean: (text) => (text === "true" ? true : text === "false" ? false : text),
};

/**
 * Variables read from the URL are text; this gives each the type its operation declares
 * (`$pastDay: Boolean` gets `true`, not `"true"`). Text that does not parse is left for the service
 * to refuse with a clear error.
 */
export function coerceVariables(document: string, variables: Record<string, unknown>): Record<string, unknown> {
  const header = /\b(?:query|mutation|subscription)\s*\w*\s*\(([^)]*)\)/.exec(document)?.[1] ?? "";
  let out: Record<string, unknown> | null = null;
  for (const [, name, type] of header.matchAll(/\$(\w+)\s*:\s*(\w+)/g)) {
    const value = variables[name];
    const parse = SCALAR_FROM_TEXT[type];
    if (typeof value !== "string" || !parse) continue;
    out ??= { ...variables };
    out[name] = parse(value);
  }
  return out ?? variables;
}

function run(transport: Transport, registry: Registry, name: string, variables: Record<string, unknown>) {
  const document = documentFor(registry, name);
  return transport(document, coerceVariables(document, variables));
}

export const operationKey = (name: string, variables: Record<string, unknown>) =>
  ["op", name, JSON.stringify(variables)] as const;

/** Runs a named query; `null` as the name skips it. */
export function useOperation<T = Record<string, unknown>>(
  name: string | null | undefined,
  variables: Record<string, unknown> = {},
  config?: SWRConfiguration,
) {
  const { transport, registry } = useData();
  return useSWR<T, GqlError>(
    name ? operationKey(name, variables) : null,
    async () => (await run(transport, registry, name as string, variables)) as T,
    { keepPreviousData: true, revalidateOnFocus: false, ...config },
  );
}

/** Refreshes every cached result of the named queries, whatever their variables. */
export function useRefresh() {
  const { mutate } = useSWRConfig();
  return useCallback(
    (names: string[] | undefined) =>
      names?.length
        ? mutate((key) => Array.isArray(key) && key[0] === "op" && names.includes(key[1] as string))
        : Promise.resolve([]),
    [mutate],
  );
}

/** Runs a named mutation. */
export function useRunOperation() {
  const { transport, registry } = useData();
  return useCallback(
    (name: string, variables: Record<string, unknown>) => run(transport, registry, name, variables),
    [transport, registry],
  );
}
