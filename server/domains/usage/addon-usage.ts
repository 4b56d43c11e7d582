import { addonOwningMethod } from "../addons/catalogue.ts";

/** One method's counts, as usage and the endpoint's metrics have them. */
export interface MethodCounts {
  method: string;
  requests: number;
  credits: number;
  refused: number;
}

/** Calls of add-on methods summed per add-on (the one owning each method at the proxy), busiest first. */
export function usageByAddon(methods: readonly MethodCounts[]) {
  const by = new Map<
    string,
    { addonSlug: string; addonName: string; requests: number; credits: number; refused: number }
  >();
  for (const m of methods) {
    const addon = addonOwningMethod(m.method);
    if (!addon) continue;
    const entry = by.get(addon.slug) ?? {
      addonSlug: addon.slug,
      addonName: addon.name,
      requests: 0,
      credits: 0,
      refused: 0,
    };
    entry.requests += m.requests;
    entry.credits += m.credits;
    entry.refused += m.refused;
    by.set(addon.slug, entry);
  }
  return [...by.values()].sort((a, b) => b.credits - a.credits || a.addonSlug.localeCompare(b.addonSlug));
}
