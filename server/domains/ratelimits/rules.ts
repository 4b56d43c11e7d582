/**
 * The rate-limit rules in one place, shared by the service (what the console shows) and the proxy's
 * rate-limit stage (what it enforces).
 *
 * - The plan's requests per second (subscription.requestsPerSecond) is a limit on the whole account,
 *   across its endpoints: the default of the RPS bucket.
 * - Buckets per endpoint: RPS, RPM, RPD. A LIMIT override sets the bucket's limit on that endpoint (RPS on
 *   top of the account's); a KEY override counts the bucket per client IP instead of per endpoint.
 * - Rate limiters add limits on some methods over an interval (SECOND, MINUTE, DAY), per endpoint or per
 *   endpoint and client IP. A KEY override of RPS without a LIMIT override limits each client IP of the
 *   endpoint to the plan's RPS. A limiter's lowest enabled rate applies; with none enabled it limits nothing.
 * - Windows are fixed (rate-limiter-flexible's counters), starting at a key's first call.
 */
export const intervals = ["SECOND", "MINUTE", "DAY"] as const;
export type Interval = (typeof intervals)[number];
export const buckets = ["RPS", "RPM", "RPD"] as const;
export type Bucket = (typeof buckets)[number];

export const intervalSeconds: Record<Interval, number> = { SECOND: 1, MINUTE: 60, DAY: 86_400 };
export const bucketSeconds: Record<Bucket, number> = { RPS: 1, RPM: 60, RPD: 86_400 };
export const bucketLabel: Record<Bucket, string> = { RPS: "per second", RPM: "per minute", RPD: "per day" };

export const ALL_METHODS = "*";

/** The rate a limiter enforces: its lowest enabled rate, or null when none is enabled. */
export function effectiveRate(rates: { rate: number; status: string }[]): number | null {
  let lowest: number | null = null;
  for (const r of rates) if (r.status === "ENABLED" && (lowest === null || r.rate < lowest)) lowest = r.rate;
  return lowest;
}

/** What one endpoint's bucket enforces: its limit (null: none beyond the account's) and whether per client IP. */
export function bucketLimit(
  bucket: Bucket,
  planRps: number | null,
  overrides: { kind: string; bucket: string; rateLimit: number | null }[],
): { limit: number | null; perIp: boolean } {
  const limit = overrides.find((o) => o.kind === "LIMIT" && o.bucket === bucket)?.rateLimit ?? null;
  const perIp = overrides.some((o) => o.kind === "KEY" && o.bucket === bucket);
  return { limit: limit ?? (perIp && bucket === "RPS" ? planRps : null), perIp };
}

export const limiterKey = (limitByIp: boolean) => (limitByIp ? "endpoint+ip" : "endpoint");

/** What a bucket counts by and limits to with no override: RPS, the plan's rate on the whole account; RPM and RPD, nothing. */
export function bucketDefault(
  bucket: Bucket,
  planRps: number | null,
): { key: "account" | "endpoint"; limit: number | null } {
  return bucket === "RPS" ? { key: "account", limit: planRps } : { key: "endpoint", limit: null };
}

/** What an override's bucket counts by: a KEY override, each client IP of the endpoint; a LIMIT override, the endpoint. */
export const overrideKey = (kind: string) => limiterKey(kind === "KEY");
