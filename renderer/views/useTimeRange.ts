// The moment a relative time range ends: fixed until the range changes or the viewer refreshes, so the
// variables it gives (and the cache keys of the queries that read them) stay stable between renders.
import { useMemo, useState } from "react";
import type { TimeRange } from "../types.ts";
import { type ParamName, type RangeChoice, readRangeChoice } from "./rangeState.ts";

export function useTimeRange(
  range: TimeRange | undefined,
  params: URLSearchParams,
  param?: ParamName,
): { choice: RangeChoice | undefined; now: number; renew: () => void } {
  // The same object while the URL is unchanged, so what is computed from it is too.
  const choice = useMemo(() => (range ? readRangeChoice(range, params, param) : undefined), [range, params, param]);
  const key = JSON.stringify(choice ?? null);
  const [now, setNow] = useState(() => Date.now());
  const [seen, setSeen] = useState(key);
  if (seen !== key) {
    setSeen(key);
    setNow(Date.now());
  }
  return { choice, now, renew: () => setNow(Date.now()) };
}
