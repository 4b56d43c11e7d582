// Who is signed in, for the shell. The shell's operation documents are in documents.ts.
import useSWR from "swr";
import type { GqlError, Transport, Viewer } from "../renderer/core.ts";
import { VIEWER_DOCUMENT } from "./documents.ts";

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
