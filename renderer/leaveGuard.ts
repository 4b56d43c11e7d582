// Unsaved edits are not lost silently: while `dirty`, closing or reloading the tab asks the browser's
// own question, and following a link inside the console (menu, tabs, breadcrumbs, row links) asks
// first. The console's router is a BrowserRouter, which cannot hold a navigation, so links are
// caught on their click, before the router sees it.
import { useEffect } from "react";

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page and lose them?";

/** The same-origin address a click would open in this tab, or null (a new tab, a download, elsewhere). */
function internalTarget(event: MouseEvent): URL | null {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return null;
  const anchor = (event.target as Element | null)?.closest?.("a[href]");
  if (!(anchor instanceof HTMLAnchorElement) || (anchor.target && anchor.target !== "_self") || anchor.download)
    return null;
  const url = new URL(anchor.href, window.location.href);
  return url.origin === window.location.origin ? url : null;
}

export function useLeaveGuard(dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return;
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers show the prompt only when returnValue is set.
      event.returnValue = "";
    };
    const click = (event: MouseEvent) => {
      const target = internalTarget(event);
      if (!target || target.pathname + target.search === window.location.pathname + window.location.search) return;
      if (!window.confirm(LEAVE_QUESTION)) {
        event.preventDefault();
        event.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", beforeUnload);
    document.addEventListener("click", click, true);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      document.removeEventListener("click", click, true);
    };
  }, [dirty]);
}
