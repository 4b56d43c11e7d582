// The shell's own operations: who is signed in, sign in, sign up, sign out. Everything else the
// console does goes through the registry's named operations.
import useSWR from "swr";
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

/** Who is signed in; `whenSignedIn` runs as soon as the answer names someone, before the page renders. */
export function useViewer(transport: Transport, whenSignedIn: (viewer: Viewer) => void) {
  return useSWR<Viewer | null, GqlError>(
    ["viewer"],
    async () => {
      const viewer = ((await transport(VIEWER_DOCUMENT)).viewer as Viewer | null) ?? null;
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
