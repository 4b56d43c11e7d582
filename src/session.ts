// The shell's own operations: who is signed in, sign in, sign up, sign out. Everything else the
// console does goes through the registry's named operations.
import useSWR from "swr";
import type { GqlError, Transport, Viewer } from "../renderer/core.ts";
import { VIEWER_DOCUMENT } from "./firstPage.ts";

export const SIGN_IN_DOCUMENT = `mutation ShellSignIn($email: String!, $password: String!) {
  signIn(email: $email, password: $password) { id email userRole }
}`;
export const SIGN_UP_DOCUMENT = `mutation ShellSignUp($input: SignUpInput!) {
  signUp(input: $input) { id email userRole }
}`;
export const SIGN_OUT_DOCUMENT = "mutation ShellSignOut { signOut }";

/** A viewer query started before the console's first render (speculateViewer), for the first useViewer to take. */
let speculatedViewer: Promise<Record<string, unknown>> | null = null;

/**
 * Starts the viewer query as the console's code starts, before its first render (main.tsx): that render
 * (antd's theme and styles) takes ~0.1 s of the main thread, which the query's round trip now overlaps.
 */
export function speculateViewer(transport: Transport): void {
  speculatedViewer = transport(VIEWER_DOCUMENT);
  speculatedViewer.catch(() => undefined);
}

/** Who is signed in; `whenSignedIn` runs as soon as the answer names someone, before the page renders. */
export function useViewer(transport: Transport, whenSignedIn: (viewer: Viewer) => void) {
  return useSWR<Viewer | null, GqlError>(
    ["viewer"],
    async () => {
      const started = speculatedViewer;
      speculatedViewer = null;
      const viewer = ((await (started ?? transport(VIEWER_DOCUMENT))).viewer as Viewer | null) ?? null;
      if (viewer) whenSignedIn(viewer);
      return viewer;
    },
    { revalidateOnFocus: true, shouldRetryOnError: false },
  );
}

export const EMAIL_CONNECTED_DOCUMENT = "query ShellEmailConnected { notificationOutbox { emailConnected } }";
export const RESEND_VERIFICATION_DOCUMENT =
  "mutation ShellResendVerificationEmail { resendVerificationEmail { success message error } }";
export const VERIFY_EMAIL_DOCUMENT = `mutation ShellVerifyEmail($token: String!) {
  verifyEmail(token: $token) { success message error }
}`;

/** What the account mutations that answer a MutationResult (setPassword, resend, verify) say. */
export interface MutationResult {
  success: boolean;
  message: string | null;
  error: string | null;
}
