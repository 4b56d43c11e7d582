/**
 * Malformed-input cases the service still gets wrong, by operation, each with the reason; the input
 * proof fails when one is fixed (so it is taken off) or a new one appears. None today: keep it that way.
 */
export const KNOWN_INPUT_FAILURES: Record<string, string[]> = {};
