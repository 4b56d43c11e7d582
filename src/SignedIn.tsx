// The signed-in console: the layout with the side navigation built from the registry, the header with
// the viewer and sign-out, and the screens. Loaded once someone is signed in, with the registries of
// icons and named widgets the screens use, and the provider of the messages and confirmations the
// screens' actions show (antd's message and modal load at the first one).
import "./icons.ts";
import "./widgets/index.ts";
import { MenuFoldOutlined, MenuOutlined, MenuUnfoldOutlined } from "@ant-design/icons";
import { Button, Spin } from "antd";
import { lazy, Suspense, useCallback, useMemo, useState, useSyncExternalStore } from "react";
import { Navigate, useLocation } from "react-router";
import {
  buildNavigation,
  DataProvider,
  errorMessage,
  FeedbackProvider,
  menuEntryFor,
  RegistryRoutes,
  SlotViews,
  type Transport,
  useRegistryQuery,
  type Viewer,
} from "../renderer/index.ts";
import { FullPage } from "./FullPage.tsx";
import { SideNav } from "./SideNav.tsx";
import { ViewerMenu } from "./ViewerMenu.tsx";

// The navigation drawer of narrow screens, and the failure page, load when first shown.
const Drawer = lazy(() => import("antd/es/drawer/index.js"));
const LoadFailed = lazy(() => import("./pages/Status.tsx").then((module) => ({ default: module.LoadFailed })));
const NotFound = lazy(() => import("./pages/Status.tsx").then((module) => ({ default: module.NotFound })));
// Only an unverified user sees the banner, and it draws with antd's Alert and Typography.
const VerifyEmailBanner = lazy(() =>
  import("./VerifyEmailBanner.tsx").then((module) => ({ default: module.VerifyEmailBanner })),
);

/** Below this width (phones, tablets, small laptops) the navigation is a drawer opened from the header. */
const DRAWER_QUERY = "(max-width: 1199.98px)";
const COLLAPSED_KEY = "nodeplane.sidebarCollapsed";

function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (onChange: () => void) => {
      const list = window.matchMedia(query);
      list.addEventListener("change", onChange);
      return () => list.removeEventListener("change", onChange);
    },
    [query],
  );
  return useSyncExternalStore(subscribe, () => window.matchMedia(query).matches);
}

/** The side navigation's collapsed state, remembered in this browser. */
function useCollapsed(): [boolean, (collapsed: boolean) => void] {
  const [collapsed, setCollapsed] = useState(() => {
    try {
      return window.localStorage.getItem(COLLAPSED_KEY) === "true";
    } catch {
      return false;
    }
  });
  const remember = (next: boolean) => {
    setCollapsed(next);
    try {
      window.localStorage.setItem(COLLAPSED_KEY, String(next));
    } catch {
      // Storage may be off (private mode); the state still holds for this visit.
    }
  };
  return [collapsed, remember];
}

export function SignedIn({
  transport,
  viewer,
  onSignOut,
}: {
  transport: Transport;
  viewer: Viewer;
  onSignOut: () => void;
}) {
  const registry = useRegistryQuery(transport, true);
  const location = useLocation();
  const [collapsed, setCollapsed] = useCollapsed();
  const drawerMode = useMediaQuery(DRAWER_QUERY);
  const [drawerOpen, setDrawerOpen] = useState(false);
  // Closed by choosing a page, the drawer leaves focus to that page's heading; closed otherwise, focus
  // goes back to the button that opened it.
  const [navigated, setNavigated] = useState(false);
  const sections = useMemo(() => (registry.data ? buildNavigation(registry.data.screens) : []), [registry.data]);
  const selected = registry.data ? menuEntryFor(location.pathname, registry.data.screens) : undefined;
  const extraRoutes = useMemo(
    () => [
      { path: "/sign-in", element: <Navigate to="/" replace /> },
      { path: "/sign-up", element: <Navigate to="/" replace /> },
      { path: "*", element: <NotFound /> },
    ],
    [],
  );

  if (registry.error)
    return (
      <FullPage>
        <Suspense fallback={<Spin size="large" />}>
          <LoadFailed
            title="The console could not load"
            detail={errorMessage(registry.error)}
            onRetry={() => void registry.mutate()}
          />
        </Suspense>
      </FullPage>
    );
  if (!registry.data)
    return (
      <FullPage>
        <Spin size="large" />
      </FullPage>
    );

  const navigation = (narrowed: boolean, onNavigate?: () => void) => (
    <SideNav sections={sections} selected={selected} narrowed={narrowed} onNavigate={onNavigate} />
  );

  return (
    <FeedbackProvider>
      <DataProvider transport={transport} registry={registry.data} viewer={viewer}>
        {/* The page's frame is ours (styles.css), in antd Layout's look: its Sider brought ~3 kB to every page. */}
        <div className="np-layout">
          {/* A fragment link: the browser moves focus to #main (focusable with tabIndex -1). */}
          <a href="#main" className="np-skip-link">
            Skip to content
          </a>
          {drawerMode ? (
            <Suspense fallback={null}>
              <Drawer
                placement="left"
                open={drawerOpen}
                onClose={() => setDrawerOpen(false)}
                focusable={{ focusTriggerAfterClose: !navigated }}
                size={264}
                title={null}
                closable={false}
                className="np-nav-drawer"
                styles={{ body: { padding: 0 } }}
              >
                {navigation(false, () => {
                  setNavigated(true);
                  setDrawerOpen(false);
                })}
              </Drawer>
            </Suspense>
          ) : (
            <aside className="np-sider" data-collapsed={collapsed || undefined}>
              <div className="np-sider-children">{navigation(collapsed)}</div>
            </aside>
          )}
          <div className="np-main">
            <header className="np-header">
              {drawerMode ? (
                <Button
                  type="text"
                  aria-label="Open navigation"
                  aria-expanded={drawerOpen}
                  icon={<MenuOutlined />}
                  onClick={() => {
                    setNavigated(false);
                    setDrawerOpen(true);
                  }}
                />
              ) : (
                <Button
                  type="text"
                  aria-label={collapsed ? "Expand navigation" : "Collapse navigation"}
                  aria-expanded={!collapsed}
                  icon={collapsed ? <MenuUnfoldOutlined /> : <MenuFoldOutlined />}
                  onClick={() => setCollapsed(!collapsed)}
                />
              )}
              <ViewerMenu viewer={viewer} onSignOut={onSignOut} />
            </header>
            <main className="np-content" id="main" tabIndex={-1}>
              {viewer.isVerified === false ? (
                <Suspense fallback={null}>
                  <VerifyEmailBanner transport={transport} email={viewer.email} />
                </Suspense>
              ) : null}
              {/* What the account must act on (a failed payment, a limit reached), above every page. */}
              <SlotViews slot="banners" />
              <Suspense fallback={<Spin />}>
                <RegistryRoutes extra={extraRoutes} />
              </Suspense>
            </main>
          </div>
        </div>
      </DataProvider>
    </FeedbackProvider>
  );
}
