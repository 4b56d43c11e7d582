import "./styles.css";
import { ConfigProvider } from "antd";
import { lazy, type ReactNode, StrictMode, Suspense, useMemo } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter, RouterProvider, useRouteError } from "react-router";
import { SWRConfig } from "swr";
import { createHttpTransport, errorMessage, useReducedMotion } from "../renderer/core.ts";
import { FullPage } from "./FullPage.tsx";
import { Shell, speculateFirstPage } from "./Shell.tsx";
import { theme } from "./theme.ts";

const transport = createHttpTransport("/graphql");
const LoadFailed = lazy(() => import("./pages/Status.tsx").then((module) => ({ default: module.LoadFailed })));

/** antd's theme, with its animations off while the system asks for reduced motion. */
function Themed({ children }: { children: ReactNode }) {
  const reduced = useReducedMotion();
  const themed = useMemo(() => ({ ...theme, token: { ...theme.token, motion: !reduced } }), [reduced]);
  return <ConfigProvider theme={themed}>{children}</ConfigProvider>;
}

/** A page that failed to render: what went wrong, and a way out that reloads the console. */
function Crashed() {
  const error = useRouteError();
  return (
    <FullPage>
      <Suspense fallback={null}>
        <LoadFailed title="This page failed" detail={errorMessage(error)} onRetry={() => window.location.reload()} />
      </Suspense>
    </FullPage>
  );
}

// A data router, so a navigation can be held (the browser's Back and Forward too) while a form has
// unsaved edits. The shell keeps its routes: the registry's screens are known only after sign-in, so
// they are descendant routes of this one.
const router = createBrowserRouter([
  { path: "*", element: <Shell transport={transport} />, errorElement: <Crashed /> },
]);

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

speculateFirstPage(transport);

createRoot(root).render(
  <StrictMode>
    <Themed>
      <SWRConfig value={{ errorRetryCount: 2 }}>
        <RouterProvider router={router} />
      </SWRConfig>
    </Themed>
  </StrictMode>,
);
