// From manifests to routes, navigation and pages. A manifest with `nav.section` is a side-menu
// entry; `nav.parent` + `tab` is a tab on the parent screen; `nav.hidden` is reached by links (its
// `parent` gives the breadcrumb and the highlighted menu entry).
import { Skeleton, Space } from "antd";
import { lazy, type ReactNode, Suspense, useEffect, useMemo, useRef, useState } from "react";
import { Link, matchRoutes, type RouteObject, useLocation, useParams, useRoutes, useSearchParams } from "react-router";
import { useData, useOperation, useRecordFormat, useRefresh } from "./data.tsx";
import { ScreenFaultBoundary } from "./faults.tsx";
import { Intro } from "./Intro.tsx";
import { LeaveGuard } from "./leaveGuard.tsx";
import { can, readOnlyFor, roleLabel } from "./permissions.ts";
import { fillRoute, fillTemplate, getPath, resolveVariables, type Scope } from "./resolve.ts";
import type { DetailView as DetailViewSpec, Manifest, View } from "./types.ts";
import { VIEW_MODULES } from "./views/modules.ts";
import { endsNow, type RangeChoice, rangeChanges, rangeValues } from "./views/rangeState.ts";
import { useTimeRange } from "./views/useTimeRange.ts";

// Each view kind loads when a screen first shows one, so sign-in and a first screen download only the
// views they draw (forms bring rjsf and ajv, lists the table, charts ECharts).
const ListView = lazy(VIEW_MODULES.list);
const DetailView = lazy(VIEW_MODULES.detail);
const FormView = lazy(VIEW_MODULES.form);
const ChartView = lazy(VIEW_MODULES.chart);
const CustomView = lazy(VIEW_MODULES.custom);
const AlertView = lazy(VIEW_MODULES.alert);
// The time-range control loads with the first screen that has one (it brings antd's Select).
const TimeRangeControl = lazy(() =>
  import("./views/TimeRangeControl.tsx").then((module) => ({ default: module.TimeRangeControl })),
);
// Shown only to a role without access: it loads when one opens such a screen.
const NeedsRole = lazy(() => import("./views/NeedsRole.tsx").then((module) => ({ default: module.NeedsRole })));

/**
 * What a view shows while its code loads: a skeleton, not antd's loading Card (Card brings Tabs,
 * Dropdown and Menu along, which a screen without cards would download for nothing).
 */
function ViewLoading({ maxWidth }: { maxWidth?: number }) {
  return (
    <div className="np-view-loading" style={{ maxWidth }}>
      <Skeleton active />
    </div>
  );
}

export interface NavItem {
  id: string;
  label: string;
  route: string;
  icon?: string;
  order: number;
}

export interface NavSection {
  section: string;
  items: NavItem[];
}

/** Side-menu sections in order (a section sorts by its first item's order). */
export function buildNavigation(manifests: Manifest[]): NavSection[] {
  const sections = new Map<string, NavItem[]>();
  for (const manifest of manifests) {
    const nav = manifest.nav;
    if (!nav || !("section" in nav)) continue;
    const items = sections.get(nav.section) ?? [];
    items.push({ id: manifest.id, label: nav.label, route: manifest.route, icon: nav.icon, order: nav.order ?? 100 });
    sections.set(nav.section, items);
  }
  return [...sections.entries()]
    .map(([section, items]) => ({ section, items: items.sort((a, b) => a.order - b.order) }))
    .sort((a, b) => a.items[0].order - b.items[0].order);
}

function parentOf(manifest: Manifest): string | undefined {
  const nav = manifest.nav;
  return nav && "parent" in nav ? nav.parent : undefined;
}

/** The screen and its tab siblings: the root (a non-tab screen) first, then its tabs by order. */
export function tabFamily(manifest: Manifest, manifests: Manifest[]): Manifest[] {
  // A tab has a parent; a menu screen's own `nav.tab` only names its first tab.
  const isTab = (candidate: Manifest) => Boolean(candidate.nav && "tab" in candidate.nav && parentOf(candidate));
  const root = isTab(manifest) ? manifests.find((candidate) => candidate.id === parentOf(manifest)) : manifest;
  if (!root) return [manifest];
  const tabs = manifests
    .filter((candidate) => isTab(candidate) && parentOf(candidate) === root.id)
    .sort((a, b) => ((a.nav as { order?: number }).order ?? 100) - ((b.nav as { order?: number }).order ?? 100));
  return tabs.length ? [root, ...tabs] : [manifest];
}

/**
 * The side-menu entry a path belongs to: its own screen, else the nearest ancestor in the menu. The screen
 * is the one the router shows for the path (react-router's ranking: `/functions/quick` is the quick-function
 * screen, not `/functions/:functionId`, however long the parameter's name).
 */
export function menuEntryFor(pathname: string, manifests: Manifest[]): string | undefined {
  const byId = new Map(manifests.map((manifest) => [manifest.id, manifest]));
  const matchedId = matchRoutes(
    manifests.map((manifest) => ({ id: manifest.id, path: manifest.route })),
    pathname,
  )?.[0]?.route.id;
  let current: Manifest | undefined = matchedId ? byId.get(matchedId) : undefined;
  for (let depth = 0; current && depth < 10; depth += 1) {
    if (current.nav && "section" in current.nav) return current.id;
    const parent = parentOf(current);
    current = parent ? byId.get(parent) : undefined;
  }
  return undefined;
}

/** The label of a root screen's own tab: its `nav.tab`, else "Overview". */
function rootTabLabel(root: Manifest): string {
  return root.nav && "section" in root.nav && root.nav.tab ? root.nav.tab : "Overview";
}

/**
 * The detail view that names a record page: on a screen whose route has parameters, the root
 * screen's first detail view with a title. Its filled title becomes the page heading.
 */
export function headingView(root: Manifest): DetailViewSpec | undefined {
  if (!root.route.includes(":")) return undefined;
  return root.views.find((view): view is DetailViewSpec => view.kind === "detail" && Boolean(view.title));
}

/** The page heading: the heading view's title filled from its record, else the screen's title. */
function usePageHeading(root: Manifest, scope: Scope): { text: string; fromRecord: boolean; loading: boolean } {
  const view = headingView(root);
  const variables = useMemo(() => resolveVariables(view?.variables, scope), [view, scope]);
  const result = useOperation(view?.query, variables);
  const formatField = useRecordFormat(view?.entity);
  if (!view?.title) return { text: root.title, fromRecord: false, loading: false };
  // SWR keeps the last answer beside a failed revalidation: a record found no more (deleted, then
  // back) is not named from it while its views say it is not there.
  const record = result.data && !result.error ? getPath(result.data, view.record) : undefined;
  if (!record) return { text: root.title, fromRecord: false, loading: !result.error };
  return {
    text: fillTemplate(view.title, record, false, scope, formatField).trim() || root.title,
    fromRecord: true,
    loading: false,
  };
}

interface ViewProps<Spec extends View> {
  view: Spec;
  scope: Scope;
  isHeading: boolean;
  pageTitle: string;
}

/** How each view kind of the manifest format renders; the contract suite checks these are the schema's kinds. */
const VIEWS: { [Kind in View["kind"]]: (props: ViewProps<Extract<View, { kind: Kind }>>) => ReactNode } = {
  list: ({ view, scope }) => <ListView view={view} scope={scope} />,
  detail: ({ view, scope, isHeading }) => <DetailView view={view} scope={scope} titleInHeading={isHeading} />,
  form: ({ view, scope, pageTitle }) => (
    <Suspense fallback={<ViewLoading maxWidth={720} />}>
      <FormView view={view} scope={scope} pageTitle={pageTitle} />
    </Suspense>
  ),
  chart: ({ view, scope }) => <ChartView view={view} scope={scope} />,
  custom: ({ view, scope }) => <CustomView view={view} scope={scope} />,
  alert: ({ view, scope }) => <AlertView view={view} scope={scope} />,
};

/** The view kinds the renderer can show. */
export const viewKinds = (): string[] => Object.keys(VIEWS);

function ViewSwitch(props: ViewProps<View>) {
  // The map is keyed by kind, so the entry for props.view.kind takes exactly this view's type.
  const render = VIEWS[props.view.kind] as (props: ViewProps<View>) => ReactNode;
  return <Suspense fallback={<ViewLoading />}>{render(props)}</Suspense>;
}

/** The path whose heading last took focus; the page the browser opened first keeps focus where it starts. */
let headingFocusedFor: string | undefined;

/**
 * After a navigation inside the console, focus goes to the new page's heading (once it shows its
 * final text), so a screen reader announces the page and Tab continues from there.
 */
function useHeadingFocus(ready: boolean) {
  const ref = useRef<HTMLHeadingElement>(null);
  const { pathname } = useLocation();
  useEffect(() => {
    if (!ready || headingFocusedFor === pathname) return;
    const first = headingFocusedFor === undefined;
    headingFocusedFor = pathname;
    if (!first) ref.current?.focus();
  }, [ready, pathname]);
  return ref;
}

/** Whether the console's first page has been painted. */
let firstPagePainted = false;

/**
 * False while the first page the browser opened is being drawn, until the browser has painted it; true
 * from then on. That page draws its frame and heading first and its views just after, so the heading
 * (what the page is) shows without waiting for the views' first render, the costliest part of it.
 */
function useFirstPagePainted(): boolean {
  const [painted, setPainted] = useState(firstPagePainted);
  useEffect(() => {
    if (painted) return;
    let timer: number | undefined;
    // A task queued by the next animation frame runs once that frame is painted.
    const frame = requestAnimationFrame(() => {
      timer = window.setTimeout(() => {
        firstPagePainted = true;
        setPainted(true);
      });
    });
    return () => {
      cancelAnimationFrame(frame);
      window.clearTimeout(timer);
    };
  }, [painted]);
  return painted;
}

/** The names of the queries a screen's views run (a refresh of the screen runs them again). */
function screenQueries(manifest: Manifest): string[] {
  return manifest.views.flatMap((view) => ("query" in view && view.query ? [view.query] : []));
}

/**
 * A screen's own time range (`timeRange` in its manifest): the choice in the URL, the bounds every view
 * reads as `$query.<from>`/`$query.<to>`, and what the control does (choosing pushes a URL entry, so
 * Back returns to the range before).
 */
function useScreenRange(manifest: Manifest, search: URLSearchParams, setSearch: (next: URLSearchParams) => void) {
  const range = manifest.timeRange;
  const { choice, now, renew } = useTimeRange(range, search);
  const refresh = useRefresh();
  const values = useMemo(() => (range && choice ? rangeValues(range, choice, now) : {}), [range, choice, now]);
  const choose = (next: RangeChoice) => {
    if (!range) return;
    const out = new URLSearchParams(search);
    for (const [name, value] of Object.entries(rangeChanges(range, next))) {
      if (value === null) out.delete(name);
      else out.set(name, value);
    }
    setSearch(out);
  };
  // A range ending now moves to end now (new bounds, so every view asks again); any other asks again as it is.
  const reload = () => (choice && endsNow(choice) ? renew() : void refresh(screenQueries(manifest)));
  return { range, choice, values, choose, reload };
}

/**
 * One word for the page when the member's role may not make (all) the changes it offers, instead of
 * leaving them to find out from each disabled button.
 */
function ReadOnlyNotice({ role, views }: { role: string; views: Manifest["views"] }) {
  const readOnly = readOnlyFor(role, views);
  if (!readOnly) return null;
  const yours = roleLabel(role);
  const needed = roleLabel(readOnly.needed);
  return (
    <p className="np-readonly-notice" role="note">
      {readOnly.nothing
        ? `Read-only: your role is ${yours}, and changes here need ${needed} or higher.`
        : `Some changes here need ${needed} or higher; your role is ${yours}.`}{" "}
      An owner of the account can change your role under Account → Team.
    </p>
  );
}

export function ScreenPage({ manifest }: { manifest: Manifest }) {
  const { registry, viewer } = useData();
  const params = useParams();
  const [search, setSearch] = useSearchParams();
  const screenRange = useScreenRange(manifest, search, setSearch);
  const rangeQuery = screenRange.values;
  const scope = useMemo<Scope>(() => {
    const query: Record<string, string | string[] | undefined> = {};
    for (const key of new Set(search.keys())) {
      const values = search.getAll(key);
      query[key] = values.length > 1 ? values : values[0];
    }
    // The screen's range wins over its raw from/to parameters: a preset gives bounds the URL does not hold.
    return { route: params, query: { ...query, ...rangeQuery }, viewer };
  }, [params, search, viewer, rangeQuery]);
  const family = tabFamily(manifest, registry.screens);
  const root = family[0];
  const parentId = parentOf(root);
  const parent = parentId ? registry.screens.find((candidate) => candidate.id === parentId) : undefined;
  const parentRoute = parent ? fillRoute(parent.route, params) : null;
  const heading = usePageHeading(root, scope);
  const ownHeadingView = manifest === root ? headingView(root) : undefined;
  const headingRef = useHeadingFocus(!heading.loading);
  const painted = useFirstPagePainted();
  // On a narrow screen the tabs scroll sideways: the current one is brought into view (each screen is
  // its own page, mounted anew).
  const activeTabRef = useRef<HTMLAnchorElement>(null);
  useEffect(() => {
    activeTabRef.current?.scrollIntoView?.({ block: "nearest", inline: "nearest" });
  }, []);

  useEffect(() => {
    document.title = `${heading.text} · Nodeplane`;
  }, [heading.text]);

  if (!can(viewer.userRole, manifest.requires?.role))
    return (
      <Suspense fallback={<ViewLoading />}>
        <NeedsRole title={manifest.title} needed={manifest.requires?.role ?? "VIEWER"} have={viewer.userRole} />
      </Suspense>
    );

  return (
    <div className="np-screen" data-screen={manifest.id}>
      {parent && parentRoute ? (
        <nav aria-label="Breadcrumb" className="np-breadcrumb">
          <ol>
            <li>
              <Link to={parentRoute}>{parent.title}</Link>
            </li>
            <li aria-current="page">{heading.text}</li>
          </ol>
        </nav>
      ) : null}
      <div className="np-page-header">
        <div className="np-page-heading">
          {heading.fromRecord || heading.loading ? <span className="np-page-kicker">{root.title}</span> : null}
          {heading.loading ? (
            <Skeleton.Input active size="small" style={{ width: 240, marginTop: 4 }} />
          ) : (
            <h1 className="np-page-title" tabIndex={-1} ref={headingRef}>
              {heading.text}
            </h1>
          )}
          {root.description ? <Intro className="np-page-description">{root.description}</Intro> : null}
        </div>
      </div>
      {family.length > 1 ? (
        // The tabs of a record are pages with their own addresses: links in a navigation landmark.
        <nav className="np-tabs" aria-label={`${heading.text} sections`}>
          {family.map((candidate) => {
            const path = fillRoute(candidate.route, params);
            const label = candidate === root ? rootTabLabel(root) : (candidate.nav as { tab: string }).tab;
            return path ? (
              <Link
                key={candidate.id}
                to={path}
                className={candidate === manifest ? "np-tab np-tab-active" : "np-tab"}
                aria-current={candidate === manifest ? "page" : undefined}
                ref={candidate === manifest ? activeTabRef : undefined}
              >
                {label}
              </Link>
            ) : null;
          })}
        </nav>
      ) : null}
      {manifest !== root && manifest.description ? (
        // A tab's own description (the root's is in the header): what this tab does that the others do not.
        <Intro className="np-tab-description">{manifest.description}</Intro>
      ) : null}
      <ReadOnlyNotice role={viewer.userRole} views={manifest.views} />
      {screenRange.range && screenRange.choice ? (
        <div className="np-screen-toolbar">
          <Suspense fallback={null}>
            <TimeRangeControl
              range={screenRange.range}
              choice={screenRange.choice}
              onChoose={screenRange.choose}
              onRefresh={screenRange.reload}
            />
          </Suspense>
        </div>
      ) : null}
      <ScreenFaultBoundary key={manifest.id} screen={manifest.id}>
        <Space orientation="vertical" size={16} style={{ width: "100%" }}>
          {(painted ? manifest.views : []).map((view, index) => (
            <ViewSwitch
              key={`${manifest.id}-${view.id ?? index}`}
              view={view}
              scope={scope}
              isHeading={view === ownHeadingView}
              pageTitle={heading.text}
            />
          ))}
        </Space>
      </ScreenFaultBoundary>
    </div>
  );
}

/**
 * The views of the screens that fill one slot of the shell's frame (`slot` in their manifests), e.g. the
 * account's banners above every page, for the roles those screens open to. They draw once the first page
 * is painted and show nothing while they load, so no page waits on them; their queries are cached like any
 * view's, and the actions that name them refresh them.
 */
export function SlotViews({ slot }: { slot: NonNullable<Manifest["slot"]> }) {
  const { registry, viewer } = useData();
  const painted = useFirstPagePainted();
  const scope = useMemo<Scope>(() => ({ route: {}, query: {}, viewer }), [viewer]);
  const views = registry.screens
    .filter((manifest) => manifest.slot === slot && can(viewer.userRole, manifest.requires?.role))
    .flatMap((manifest) => manifest.views.map((view, index) => ({ key: `${manifest.id}-${view.id ?? index}`, view })));
  if (!painted || views.length === 0) return null;
  const render = (view: View) =>
    (VIEWS[view.kind] as (props: ViewProps<View>) => ReactNode)({
      view,
      scope,
      isHeading: false,
      // A slot's views belong to no one page: a view that names its page names none.
      pageTitle: "",
    });
  return (
    <div className="np-slot" data-slot={slot}>
      {views.map(({ key, view }) => (
        <Suspense key={key} fallback={null}>
          {render(view)}
        </Suspense>
      ))}
    </div>
  );
}

/**
 * Routes for every screen in the registry, then for the screens the viewer's role does not open (each
 * says which role it needs), then the shell's extra routes (e.g. a 404), inside the guard that asks before
 * leaving unsaved edits (it needs a data router).
 */
export function RegistryRoutes({ extra }: { extra?: RouteObject[] }) {
  const { registry, viewer } = useData();
  const routes = useMemo<RouteObject[]>(
    () => [
      // A slotted screen is shown in the shell's frame (SlotViews), not at an address of its own.
      ...registry.screens
        .filter((manifest) => !manifest.slot)
        .map((manifest) => ({
          path: manifest.route,
          element: <ScreenPage key={manifest.id} manifest={manifest} />,
        })),
      ...(registry.locked ?? []).map((screen) => ({
        path: screen.route,
        element: (
          <Suspense fallback={<ViewLoading />}>
            <NeedsRole title={screen.title} needed={screen.requires.role ?? "VIEWER"} have={viewer.userRole} />
          </Suspense>
        ),
      })),
      ...(extra ?? []),
    ],
    [registry.screens, registry.locked, viewer.userRole, extra],
  );
  const element = useRoutes(routes);
  return <LeaveGuard>{element}</LeaveGuard>;
}
