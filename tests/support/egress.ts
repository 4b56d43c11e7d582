/**
 * The egress policy tests run with: their receivers (webhook servers, S3 and Azure emulators, the test
 * PostgreSQL server) listen on loopback, which the default policy refuses. Tests that prove a refusal
 * start the service with `NODEPLANE_EGRESS_ALLOW: ""` (the default) instead.
 */
import type dns from "node:dns";
import net from "node:net";
import { EgressPolicy, parseEgressAllow } from "../../server/platform/egress.ts";

/** NODEPLANE_EGRESS_ALLOW for test services: loopback receivers only. */
export const TEST_EGRESS_ALLOW = "127.0.0.1/32,::1";

/** The policy destinations get in tests that build them directly. */
export const testEgress = new EgressPolicy({ allow: parseEgressAllow(TEST_EGRESS_ALLOW) });

type Answers = Record<string, string[] | ((asked: number) => string[])>;

/**
 * A resolver that answers from a table, so a test names what a host resolves to; an entry may be a
 * function of how often the name was asked (1 the first time), for a name that rebinds.
 */
export function resolverOf(table: Answers) {
  const asked = new Map<string, number>();
  return (
    hostname: string,
    _options: dns.LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
  ) => {
    const count = (asked.get(hostname) ?? 0) + 1;
    asked.set(hostname, count);
    const entry = table[hostname];
    const found = typeof entry === "function" ? entry(count) : entry;
    if (!found) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = "ENOTFOUND";
      process.nextTick(() => callback(error, []));
      return;
    }
    process.nextTick(() =>
      callback(
        null,
        found.map((address) => ({ address, family: net.isIP(address) })),
      ),
    );
  };
}
