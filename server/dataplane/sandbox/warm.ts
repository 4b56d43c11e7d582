import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { type Filter, type FilterInput, type FilterOptions, newFilter } from "./filter.ts";
import type { FilterOutcome } from "./types.ts";

/**
 * Warm isolates for functions: one per account, function and version (its code, calling convention
 * and limits), reused across calls like a warm function instance, so a call costs a call, not loading
 * the code. A new version gets a new isolate; the old one is dropped when unused for IDLE_MS or when
 * more than MAX_WARM are kept. Helpers are per account, so they are bound to the first call's.
 */
const MAX_WARM = 200;
const IDLE_MS = 10 * 60_000;

const warm = new LRUCache<string, Filter>({
  max: MAX_WARM,
  ttl: IDLE_MS,
  updateAgeOnGet: true,
  dispose: (filter) => filter.dispose(),
});

export interface WarmKey {
  accountId: string;
  /** The function's id: its isolate is never shared with another function's. */
  functionId: string;
}

function keyOf(key: WarmKey, options: FilterOptions): string {
  const version = createHash("sha256")
    .update(JSON.stringify([options.source, options.version ?? null, options.limits ?? {}]))
    .digest("base64url");
  return `${key.accountId}\u0000${key.functionId}\u0000${version}`;
}

/** Runs the function's code in its warm isolate (loading it on first use). */
export function runWarm(key: WarmKey, options: FilterOptions, input: FilterInput): Promise<FilterOutcome> {
  const k = keyOf(key, options);
  let filter = warm.get(k);
  if (!filter) {
    filter = newFilter(options);
    warm.set(k, filter);
  }
  return filter.run(input);
}
