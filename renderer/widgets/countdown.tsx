// Time left until a date-time value, ticking each second: a deadline the user acts against (a charge to
// pay before it expires). Past it, `options.endedText` (default "Passed") instead of a negative time.
import { useEffect, useState } from "react";
import { Hint } from "../Hint.tsx";
import type { ReadWidgetProps } from "./registry.ts";
import { EMPTY } from "./text.tsx";

const pad = (n: number) => String(n).padStart(2, "0");

/** Whole seconds left as h:mm:ss, or m:ss under an hour. */
export function timeLeft(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

export function Countdown({ value, options }: ReadWidgetProps) {
  const deadline = value === null || value === undefined || value === "" ? Number.NaN : Date.parse(String(value));
  const [now, setNow] = useState(() => Date.now());
  const running = Number.isFinite(deadline) && now < deadline;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  if (!Number.isFinite(deadline)) return EMPTY;
  const date = new Date(deadline);
  const text = running
    ? `${timeLeft(deadline - now)} left`
    : typeof options.endedText === "string"
      ? options.endedText
      : "Passed";
  return (
    <Hint title={date.toLocaleString()}>
      <time dateTime={date.toISOString()} role="timer" aria-live="off">
        {text}
      </time>
    </Hint>
  );
}
