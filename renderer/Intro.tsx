// A paragraph that introduces a page, a tab or a list, folded on a phone.
import { type ReactNode, useId, useLayoutEffect, useRef, useState } from "react";

/**
 * A page's or list's introduction: on a narrow screen it folds to two lines (src/styles.css), so the
 * content is not pushed below the fold, with a button that unfolds it, shown only while the fold hides
 * some of the text.
 */
export function Intro({ children, className }: { children: ReactNode; className: string }) {
  const id = useId();
  const paragraph = useRef<HTMLParagraphElement>(null);
  const [open, setOpen] = useState(false);
  const [folded, setFolded] = useState(false);
  useLayoutEffect(() => {
    const element = paragraph.current;
    if (!element || open) return;
    const measure = () => setFolded(element.scrollHeight > element.clientHeight + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [open]);
  return (
    <div className="np-intro">
      <p
        id={id}
        ref={paragraph}
        className={`np-muted np-intro-text ${className}`}
        data-open={open || undefined}
        data-folded={folded || undefined}
      >
        {children}
      </p>
      {folded ? (
        <button
          type="button"
          className="np-intro-more"
          aria-expanded={open}
          aria-controls={id}
          onClick={() => setOpen(!open)}
        >
          {open ? "Less" : "More"}
        </button>
      ) : null}
    </div>
  );
}
