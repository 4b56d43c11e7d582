// The first screen's needs, started as soon as the registry answers: the code of its views and the
// answers of its queries (lists, records, charts), so neither waits for the signed-in console's code
// and the view's code to arrive one after the other. The views then take those answers (renderer/data.tsx,
// preloadOperation), by the same operation names and variables they compute themselves.
import { matchRoutes } from "react-router";
import { preloadOperation, type Transport } from "./data.tsx";
import { can } from "./permissions.ts";
import { resolveVariables, type Scope } from "./resolve.ts";
import type { Registry, Viewer } from "./types.ts";
import { listVariables } from "./views/listState.ts";
import { VIEW_MODULES } from "./views/modules.ts";

/** The screen at `location` (ranked as the router ranks routes), its views' code and data. */
export function preloadScreen(
  transport: Transport,
  registry: Registry,
  viewer: Viewer,
  location: { pathname: string; search: string },
): void {
  const matched = matchRoutes(
    registry.screens.map((manifest) => ({ path: manifest.route, manifest })),
    location.pathname,
  )?.at(-1);
  if (!matched || !can(viewer.userRole, matched.route.manifest.requires?.role)) return;
  const params = new URLSearchParams(location.search);
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    query[key] = values.length > 1 ? values : values[0];
  }
  // The scope ScreenPage builds: the route's parameters, the query string and the viewer.
  const scope: Scope = { route: matched.params, query, viewer };
  for (const view of matched.route.manifest.views) {
    void VIEW_MODULES[view.kind]().catch(() => undefined);
    // A relative time range ends when the view first renders, so its variables are not known here.
    if (view.kind === "list" && !view.timeRange)
      preloadOperation(transport, registry, view.query, listVariables(view, scope, params));
    else if ((view.kind === "detail" || view.kind === "chart" || view.kind === "alert") && view.query)
      preloadOperation(transport, registry, view.query, resolveVariables(view.variables, scope));
  }
}
