// The console shell: signed out, the sign-in and sign-up pages; signed in, the layout of SignedIn.tsx
// with the side navigation built from the registry, the header with the viewer and sign-out, and the
// screens; either way, the page a verification link opens.
import { Spin } from "antd";
import { lazy, Suspense, useEffect, useMemo, useState } from "react";
import { Navigate, Route, Routes, useLocation, useNavigate } from "react-router";
import { useSWRConfig } from "swr";
import { errorMessage, GqlError, preloadRegistry, speculateRegistry, type Transport } from "../renderer/core.ts";
import { FullPage } from "./FullPage.tsx";
import { SIGNED_OUT_PAGE } from "./firstPage.ts";
import { SIGN_OUT_DOCUMENT, speculateViewer, useViewer } from "./session.ts";

// Pages load when first shown: a signed-in start never downloads the sign-in form, nor sign-in the
// signed-in layout with its screens, registries and icons.
const SignIn = lazy(() => import("./pages/SignIn.tsx").then((module) => ({ default: module.SignIn })));
const SignUp = lazy(() => import("./pages/SignUp.tsx").then((module) => ({ default: module.SignUp })));
const VerifyEmail = lazy(() => import("./pages/VerifyEmail.tsx").then((module) => ({ default: module.VerifyEmail })));
// Its illustrations make antd's Result large: it loads with the first page that fails.
const LoadFailed = lazy(() => import("./pages/Status.tsx").then((module) => ({ default: module.LoadFailed })));

type SignedInPage = typeof import("./SignedIn.tsx").SignedIn;
let signedInCode: Promise<SignedInPage> | null = null;
let signedInLoaded: SignedInPage | null = null;

/** The signed-in console's code, asked for once. */
function loadSignedIn(): Promise<SignedInPage> {
  signedInCode ??= import("./SignedIn.tsx").then((module) => {
    signedInLoaded = module.SignedIn;
    return module.SignedIn;
  });
  return signedInCode;
}

/**
 * The signed-in console once its code is in, and null until then: the loading page stands for it as a
 * page, not as a Suspense fallback. React holds back what a fallback was waiting for until 300 ms after
 * the last fallback it showed (its reveal throttle), which kept a cold load's first screen back by up to
 * that (docs/decisions/1873-the-signed-in-console-without-a-suspense-fallback.md). A failed load throws,
 * for the router's error page, as a lazy component's would.
 */
function useSignedInPage(wanted: boolean): SignedInPage | null {
  const [page, setPage] = useState<{ component: SignedInPage } | null>(() =>
    signedInLoaded ? { component: signedInLoaded } : null,
  );
  const [failure, setFailure] = useState<{ error: unknown } | null>(null);
  useEffect(() => {
    if (!wanted || page) return;
    let live = true;
    loadSignedIn().then(
      (component) => live && setPage({ component }),
      (error: unknown) => live && setFailure({ error }),
    );
    return () => {
      live = false;
    };
  }, [wanted, page]);
  if (failure) throw failure.error;
  return page?.component ?? null;
}

/**
 * What the first page needs, asked for as the console's code starts, before its first render (main.tsx;
 * docs/decisions/1870-first-queries-before-the-first-render.md): the viewer query, and on any page but
 * the signed-out ones, where the viewer is most likely signed in, the registry and the signed-in
 * console's code with it, not after its answer (docs/decisions/1821-signed-in-code-with-the-viewer-query.md).
 * Once per visit.
 */
export function speculateFirstPage(transport: Transport): void {
  speculateViewer(transport);
  if (SIGNED_OUT_PAGE.test(window.location.pathname)) return;
  // The registry before the code: over HTTP/1.1's six connections it would otherwise wait behind the code's files.
  speculateRegistry(transport);
  void loadSignedIn().catch(() => undefined);
}

/** What stands for the console while it loads. */
const loadingPage = (
  <FullPage>
    <Spin size="large" />
  </FullPage>
);

export function Shell({ transport: baseTransport }: { transport: Transport }) {
  const { mutate, cache } = useSWRConfig();
  // Any call that finds the session gone sends the viewer back to the sign-in page.
  const transport = useMemo<Transport>(
    () => async (document, variables) => {
      try {
        return await baseTransport(document, variables);
      } catch (error) {
        if (error instanceof GqlError && error.code === "UNAUTHENTICATED" && !document.includes("ShellSignIn"))
          void mutate(["viewer"]);
        throw error;
      }
    },
    [baseTransport, mutate],
  );
  // Signed in, the registry (then the first screen's data) is asked for while the signed-in console's code downloads.
  const viewer = useViewer(transport, (signedIn) => preloadRegistry(transport, cache, signedIn));
  const SignedIn = useSignedInPage(Boolean(viewer.data));
  const location = useLocation();
  const navigate = useNavigate();
  const refreshViewer = () => viewer.mutate();

  async function signOut() {
    try {
      await transport(SIGN_OUT_DOCUMENT);
    } finally {
      for (const key of [...cache.keys()]) cache.delete(key);
      await viewer.mutate(null, { revalidate: false });
      navigate("/sign-in", { replace: true });
    }
  }

  if (viewer.error && viewer.error.code !== "UNAUTHENTICATED")
    return (
      <FullPage>
        <Suspense fallback={<Spin size="large" />}>
          <LoadFailed
            title="Cannot reach Nodeplane"
            detail={errorMessage(viewer.error)}
            onRetry={() => void viewer.mutate()}
          />
        </Suspense>
      </FullPage>
    );
  if (viewer.isLoading) return loadingPage;
  // A verification link works signed in or not, and signed in as anyone: the link names its user.
  if (location.pathname === "/verify-email")
    return (
      <Suspense fallback={loadingPage}>
        <VerifyEmail transport={transport} signedIn={Boolean(viewer.data)} onVerified={refreshViewer} />
      </Suspense>
    );
  if (!viewer.data) {
    const next =
      location.pathname === "/" || location.pathname.startsWith("/sign-")
        ? ""
        : `?next=${encodeURIComponent(location.pathname + location.search)}`;
    return (
      <Suspense fallback={loadingPage}>
        <Routes>
          <Route path="/sign-in" element={<SignIn transport={transport} onSignedIn={refreshViewer} />} />
          <Route path="/sign-up" element={<SignUp transport={transport} onSignedIn={refreshViewer} />} />
          <Route path="*" element={<Navigate to={`/sign-in${next}`} replace />} />
        </Routes>
      </Suspense>
    );
  }
  if (!SignedIn) return loadingPage;
  return <SignedIn key={viewer.data.email} transport={transport} viewer={viewer.data} onSignOut={signOut} />;
}
