// Unsaved edits are not lost silently. While a form or editor is dirty, closing or reloading the tab
// asks the browser's own question, and every navigation inside the console (a link, the browser's
// Back and Forward, a redirect) is held by the router until the user chooses Stay or Leave.
// A router runs one blocker (react-router's `useBlocker` evaluates only the last registered), so the
// dirty parts register with one `LeaveGuard` that holds that blocker for all of them.
import {
  createContext,
  lazy,
  type ReactNode,
  Suspense,
  useCallback,
  useContext,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from "react";
import { type BlockerFunction, useBlocker } from "react-router";

// The question and antd's Modal load when a navigation is first held.
const LeaveDialog = lazy(() => import("./LeaveDialog.tsx"));

export const LEAVE_TITLE = "Leave this page?";
export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?";

interface Guards {
  add(token: object): void;
  remove(token: object): void;
}

const GuardsContext = createContext<Guards | null>(null);

/** Holds the router's one blocker for every dirty form or editor below it, and asks Stay or Leave. */
export function LeaveGuard({ children }: { children: ReactNode }) {
  // Read when a navigation starts (not a render's copy), so a released mark no longer holds it.
  const dirty = useRef(new Set<object>());
  const guards = useMemo<Guards>(
    () => ({ add: (token) => dirty.current.add(token), remove: (token) => dirty.current.delete(token) }),
    [],
  );
  // A change of the hash alone (a skip link) leaves the page where it is.
  const shouldBlock = useCallback<BlockerFunction>(
    ({ currentLocation, nextLocation }) =>
      dirty.current.size > 0 &&
      (currentLocation.pathname !== nextLocation.pathname || currentLocation.search !== nextLocation.search),
    [],
  );
  const blocker = useBlocker(shouldBlock);
  const blocked = blocker.state === "blocked";
  return (
    <GuardsContext.Provider value={guards}>
      {children}
      {blocked ? (
        <Suspense fallback={null}>
          <LeaveDialog onStay={() => blocker.reset?.()} onLeave={() => blocker.proceed?.()} />
        </Suspense>
      ) : null}
    </GuardsContext.Provider>
  );
}

/**
 * Marks the calling form or editor dirty while `dirty`: leaving asks first (see LeaveGuard). Returns
 * `release`, which drops the mark at once: a form calls it when a save succeeded and it moves on
 * (a redirect), before React has rendered the form clean.
 */
export function useLeaveGuard(dirty: boolean): () => void {
  const guards = useContext(GuardsContext);
  const [token] = useState(() => ({}));
  // A layout effect: the mark is gone in the same commit that shows the form clean.
  useLayoutEffect(() => {
    if (!dirty) return;
    guards?.add(token);
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers show the prompt only when returnValue is set.
      event.returnValue = "";
    };
    window.addEventListener("beforeunload", beforeUnload);
    return () => {
      guards?.remove(token);
      window.removeEventListener("beforeunload", beforeUnload);
    };
  }, [dirty, guards, token]);
  return useCallback(() => guards?.remove(token), [guards, token]);
}
