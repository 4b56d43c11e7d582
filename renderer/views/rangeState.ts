// A time range as the URL keeps it (a preset ending now, or a custom from/to) and the bounds it gives:
// one rule for a list's own range and for a screen's range over all its views. Pure, so it is tested
// without React.
import type { TimeRange } from "../types.ts";

export const DEFAULT_PRESETS = ["15m", "1h", "24h", "7d"];
/** The preset with no bounds: each query keeps its own default window (e.g. every recorded minute). */
export const ALL_PRESET = "all";
/** The URL parameter holding a time-range preset. */
export const RANGE_PARAM = "range";

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
const UNIT_WORDS: Record<string, [string, string]> = {
  m: ["minute", "minutes"],
  h: ["hour", "hours"],
  d: ["day", "days"],
};

/** `15m` → 15 minutes in ms; null when it is not a duration (the all preset). */
export function presetMs(preset: string): number | null {
  const match = /^(\d+)([mhd])$/.exec(preset);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : null;
}

/** `1h` → "Last hour", `24h` → "Last 24 hours", `all` → "All time". */
export function presetLabel(preset: string): string {
  if (preset === ALL_PRESET) return "All time";
  const match = /^(\d+)([mhd])$/.exec(preset);
  if (!match) return preset;
  const count = Number(match[1]);
  const [one, many] = UNIT_WORDS[match[2]];
  return count === 1 ? `Last ${one}` : `Last ${count} ${many}`;
}

/** The chosen range as the URL holds it: a preset, or a custom from/to (ISO strings). */
export type RangeChoice = { preset: string } | { from: string; to: string };

/** The URL name of a parameter (a list with an id prefixes its own). */
export type ParamName = (name: string) => string;
const unprefixed: ParamName = (name) => name;

/** The range the URL names: a custom from/to when both parse, else a preset the range offers, else its default. */
export function readRangeChoice(range: TimeRange, params: URLSearchParams, param: ParamName = unprefixed): RangeChoice {
  const from = params.get(param(range.from));
  const to = params.get(param(range.to));
  if (range.custom !== false && from && to && !Number.isNaN(Date.parse(from)) && !Number.isNaN(Date.parse(to)))
    return { from, to };
  const presets = range.presets ?? DEFAULT_PRESETS;
  const preset = params.get(param(RANGE_PARAM));
  if (preset && presets.includes(preset)) return { preset };
  return { preset: range.default ?? (presets.includes("24h") ? "24h" : presets[0]) };
}

/** Whether a choice ends at the moment it is read (a preset of a duration), so a refresh moves it. */
export function endsNow(choice: RangeChoice): boolean {
  return "preset" in choice && presetMs(choice.preset) !== null;
}

/** from/to of a choice at `now` (ms); a preset ends now; the all preset has none. */
export function rangeBounds(choice: RangeChoice, now: number): { from: string; to: string } | undefined {
  if ("from" in choice) return { from: new Date(choice.from).toISOString(), to: new Date(choice.to).toISOString() };
  const span = presetMs(choice.preset);
  if (span === null) return undefined;
  return { from: new Date(now - span).toISOString(), to: new Date(now).toISOString() };
}

/**
 * The values a range gives under its from/to names (for a list, its query's variables; for a screen,
 * `$query.<from>` and `$query.<to>`): undefined for the all preset, which a query then leaves out.
 */
export function rangeValues(range: TimeRange, choice: RangeChoice, now: number): Record<string, string | undefined> {
  const bounds = rangeBounds(choice, now);
  return { [range.from]: bounds?.from, [range.to]: bounds?.to };
}

/** The URL changes (unprefixed names; null removes) that choose a range: a preset, or a custom from/to. */
export function rangeChanges(range: TimeRange, choice: RangeChoice): Record<string, string | null> {
  return "preset" in choice
    ? { [RANGE_PARAM]: choice.preset, [range.from]: null, [range.to]: null }
    : { [RANGE_PARAM]: null, [range.from]: choice.from, [range.to]: choice.to };
}
