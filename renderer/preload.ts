// The first screen's view code, started as soon as the registry answers, so it does not wait for the
// signed-in console's code and then the view's code to arrive one after the other. Its data is asked for
// by the views themselves: an answer started here could be older than the page the view draws.
import { matchRoutes } from "react-router";
import { can } from "./permissions.ts";
import type { Registry, Viewer } from "./types.ts";
import { VIEW_MODULES } from "./views/modules.ts";

/** The screen at `location` (ranked as the router ranks routes): its views' code. */
export function preloadScreen(registry: Registry, viewer: Viewer, location: { pathname: string }): void {
  const matched = matchRoutes(
    registry.screens.map((manifest) => ({ path: manifest.route, manifest })),
    location.pathname,
  )?.at(-1);
  if (!matched || !can(viewer.userRole, matched.route.manifest.requires?.role)) return;
  for (const view of matched.route.manifest.views) void VIEW_MODULES[view.kind]().catch(() => undefined);
}
