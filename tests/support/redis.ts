/**
 * Redis for the tests that need it. CI starts a redis-server and sets `REDIS_URL`; locally, without
 * it, those tests are skipped with a message saying how to run them.
 *
 *   describeWithRedis("rate limits on Redis", () => {
 *     test("…", async () => { const url = redisUrl(); const prefix = redisKeyPrefix(); … });
 *   });
 */
import { randomBytes } from "node:crypto";
import { describe } from "vitest";

const howTo = "start one (`redis-server --port 6379`) and set REDIS_URL=redis://127.0.0.1:6379";

/** The Redis server tests may use, or undefined when none is configured. */
export function redisUrlOrUndefined(): string | undefined {
  return process.env.REDIS_URL || undefined;
}

/** The Redis server tests may use; throws with a clear message when none is configured. */
export function redisUrl(): string {
  const url = redisUrlOrUndefined();
  if (!url) throw new Error(`This test needs Redis but REDIS_URL is not set: ${howTo}.`);
  return url;
}

/** A key prefix unique to the caller, so test files sharing one Redis server do not see each other's keys. */
export function redisKeyPrefix(label = "test"): string {
  return `${label}:${randomBytes(6).toString("hex")}:`;
}

/** `describe` when REDIS_URL is set; otherwise the block is skipped and its title says why. */
export function describeWithRedis(name: string, body: () => void): void {
  if (redisUrlOrUndefined()) {
    describe(name, body);
    return;
  }
  describe.skip(`${name} [skipped: REDIS_URL is not set; ${howTo}]`, body);
}
