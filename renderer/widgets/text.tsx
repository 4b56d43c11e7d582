// Text pieces of the read views and page headers, in the look of antd's Typography: secondary text,
// inline code and a copy button. Typography itself carries its editing feature (antd's input and
// textarea with their styles) into every screen that shows a value, ~10 kB gzip on a first list.
import { CheckOutlined, CopyOutlined } from "@ant-design/icons";
import { type CSSProperties, type ReactNode, useEffect, useState } from "react";

/** Secondary text (a hint, an empty value, a count). */
export function Muted({ children, style }: { children: ReactNode; style?: CSSProperties }) {
  return (
    <span className="np-muted" style={style}>
      {children}
    </span>
  );
}

/** The empty value of a field or cell. */
export const EMPTY = <Muted>—</Muted>;

/** A value the service masked (a token shown as `abc••••••••`): never worth copying. */
export function isMasked(text: string): boolean {
  return /•{3,}/.test(text);
}

/** The copy through a `copy` event, for pages where the Clipboard API is not offered (plain http). */
function copyByCommand(text: string): boolean {
  let copied = false;
  const onCopy = (event: ClipboardEvent) => {
    event.preventDefault();
    event.clipboardData?.setData("text/plain", text);
    copied = true;
  };
  document.addEventListener("copy", onCopy, { capture: true });
  try {
    document.execCommand("copy");
  } catch {
    copied = false;
  } finally {
    document.removeEventListener("copy", onCopy, { capture: true });
  }
  return copied;
}

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return copyByCommand(text);
  }
}

/** How long the button shows that it copied. */
const COPIED_MS = 3000;

/**
 * A button that copies `text`, named by `label` for screen readers and on hover, and that says
 * "Copied" (aloud too) once it has. A masked value gets no button.
 */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = window.setTimeout(() => setCopied(false), COPIED_MS);
    return () => window.clearTimeout(timer);
  }, [copied]);
  if (isMasked(text)) return null;
  return (
    <button
      type="button"
      className="np-copy"
      aria-label={label}
      title={copied ? "Copied" : label}
      data-copied={copied || undefined}
      onClick={(event) => {
        // A copy button in a row copies; it does not open the row.
        event.stopPropagation();
        void copyText(text).then(setCopied);
      }}
    >
      {copied ? <CheckOutlined /> : <CopyOutlined />}
      <span className="np-sr-only" aria-live="polite">
        {copied ? "Copied" : ""}
      </span>
    </button>
  );
}
