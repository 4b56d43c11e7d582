// A value as a QR code picture, for a phone to scan instead of typing it (a payment request). Loaded
// with the first page that shows one, so the QR encoder is in no page's first load.
import { useMemo } from "react";
import { renderSVG } from "uqr";
import type { ReadWidgetProps } from "./registry.ts";
import { EMPTY } from "./text.tsx";

/** The picture's side in CSS pixels by default: large enough for a phone camera across a desk. */
const DEFAULT_SIZE = 176;

export function QrCode({ value, options }: ReadWidgetProps) {
  const text = value === null || value === undefined ? "" : String(value);
  // An SVG as a data: address (the console's CSP allows data: images): one <img>, scaled crisply.
  const src = useMemo(
    () => (text ? `data:image/svg+xml;utf8,${encodeURIComponent(renderSVG(text, { border: 2 }))}` : ""),
    [text],
  );
  if (!text) return EMPTY;
  const size = typeof options.size === "number" ? options.size : DEFAULT_SIZE;
  const alt = typeof options.alt === "string" ? options.alt : `QR code of ${text}`;
  return <img className="np-qr-code" src={src} alt={alt} width={size} height={size} />;
}
