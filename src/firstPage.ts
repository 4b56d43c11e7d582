// What a page asks for before the console's code has run: the build's first-page script (vite.config.ts)
// starts these queries as the HTML arrives, and the shell takes their answers (renderer/transport.ts).
// No imports: that script is written from these values.

/** The addresses of the pages that expect no one signed in (a verification link works either way). */
export const SIGNED_OUT_PAGE = /^\/(sign-in|sign-up|verify-email)(\/|$)/;

/** Who is signed in: asked on every page. */
export const VIEWER_DOCUMENT = `query ShellViewer {
  viewer { id userId email userFullName userRole isPrimaryUser companyName isVerified }
}`;
