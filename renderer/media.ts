import { useEffect, useState } from "react";

/** The width at which lists become cards (src/styles.css's phone rules use the same). */
export const PHONE_WIDTH = "(max-width: 575.98px)";

/** Whether a CSS media query matches, following changes (a window resized, a setting changed). */
export function useMediaQuery(media: string): boolean {
  const [matches, setMatches] = useState(
    () => typeof window !== "undefined" && Boolean(window.matchMedia?.(media).matches),
  );
  useEffect(() => {
    const query = window.matchMedia?.(media);
    if (!query) return;
    const onChange = () => setMatches(query.matches);
    onChange();
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, [media]);
  return matches;
}
