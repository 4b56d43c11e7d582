// A short hint above an element while the pointer is over it or focus is in it (an icon button's name,
// why an action is disabled, a date's full form), in antd's tooltip look. Our own: antd's Tooltip brings
// its popup engine (~15 kB gzip) to every list, and draws one per row.
// Visual only: what it says is also the element's accessible name or description.
import { type ReactNode, useEffect, useLayoutEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";

/** antd's delays: a hint does not flash while the pointer passes over. */
const SHOW_MS = 100;
const HIDE_MS = 100;
const GAP = 6;
/** The least room kept between a hint and the window's edges. */
const MARGIN = 8;

export function Hint({ title, children }: { title: ReactNode; children: ReactNode }) {
  const anchor = useRef<HTMLSpanElement>(null);
  const bubble = useRef<HTMLDivElement>(null);
  const timer = useRef<number | undefined>(undefined);
  const [at, setAt] = useState<{ x: number; y: number } | null>(null);

  useEffect(() => {
    if (!at) return;
    // The page moved under it: it would point at nothing.
    const hide = () => setAt(null);
    window.addEventListener("scroll", hide, true);
    window.addEventListener("resize", hide);
    return () => {
      window.removeEventListener("scroll", hide, true);
      window.removeEventListener("resize", hide);
    };
  }, [at]);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  // Centred over its element, but inside the window (an action at a row's end).
  useLayoutEffect(() => {
    const element = bubble.current;
    if (!at || !element) return;
    const half = element.offsetWidth / 2;
    const x = Math.min(Math.max(at.x, MARGIN + half), window.innerWidth - MARGIN - half);
    element.style.left = `${x}px`;
    element.style.setProperty("--np-hint-arrow", `${at.x - x}px`);
  }, [at]);

  if (title === undefined || title === null || title === "") return children;
  const later = (show: boolean) => {
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(
      () => {
        const box = anchor.current?.getBoundingClientRect();
        setAt(show && box ? { x: box.left + box.width / 2, y: box.top - GAP } : null);
      },
      show ? SHOW_MS : HIDE_MS,
    );
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: it only watches hover and focus to show a visual hint; it does nothing
    <span
      ref={anchor}
      className="np-hint-anchor"
      onPointerEnter={() => later(true)}
      onPointerLeave={() => later(false)}
      onFocus={() => later(true)}
      onBlur={() => later(false)}
    >
      {children}
      {at
        ? createPortal(
            <div ref={bubble} className="np-hint" aria-hidden="true" style={{ left: at.x, top: at.y }}>
              {title}
            </div>,
            document.body,
          )
        : null}
    </span>
  );
}
