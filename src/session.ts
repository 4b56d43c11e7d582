// The shell's own operations: who is signed in, sign in, sign up, sign out. Everything else the
// console does goes through the registry's named operations.
import useSWR, { preload } from "swr";
import type { GqlError, Transport, Viewer } from "../renderer/core.ts";

export const VIEWER_DOCUMENT = `query ShellViewer {
  viewer { id userId email userFullName userRole isPrimaryUser companyName isVerified }
}`;
export const SIGN_IN_DOCUMENT = `mutation ShellSignIn($email: String!, $password: String!) {
  signIn(email: $email, password: $password) { id email userRole }
}`;
export const SIGN_UP_DOCUMENT = `mutation ShellSignUp($input: SignUpInput!) {
  signUp(input: $input) { id email userRole }
}`;
export const SIGN_OUT_DOCUMENT = "mutation ShellSignOut { signOut }";

const VIEWER_KEY = ["viewer"];

/** Who is signed in; `whenSignedIn` runs as soon as the answer names someone, before the page renders. */
function viewerFetcher(transport: Transport, whenSignedIn: (viewer: Viewer) => void) {
  return async () => {
    const viewer = ((await transport(VIEWER_DOCUMENT)).viewer as Viewer | null) ?? null;
    if (viewer) whenSignedIn(viewer);
    return viewer;
  };
}

/**
 * Asks who is signed in before the console's first render (main.tsx), so the answer travels while the
 * browser runs the console's code and draws the loading page; the first useViewer takes it.
 */
export function preloadViewer(transport: Transport, whenSignedIn: (viewer: Viewer) => void): void {
  void preload(VIEWER_KEY, viewerFetcher(transport, whenSignedIn)).catch(() => undefined);
}

export function useViewer(transport: Transport, whenSignedIn: (viewer: Viewer) => void) {
  return useSWR<Viewer | null, GqlError>(VIEWER_KEY, viewerFetcher(transport, whenSignedIn), {
    revalidateOnFocus: true,
    shouldRetryOnError: false,
  });
}
