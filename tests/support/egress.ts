/**
 * The egress policy tests run with: their receivers (webhook servers, S3 and Azure emulators, the test
 * PostgreSQL server) listen on loopback, which the default policy refuses. Tests that prove a refusal
 * start the service with `NODEPLANE_EGRESS_ALLOW: ""` (the default) instead.
 */
import { EgressPolicy, parseEgressAllow } from "../../server/platform/egress.ts";

/** NODEPLANE_EGRESS_ALLOW for test services: loopback receivers only. */
export const TEST_EGRESS_ALLOW = "127.0.0.1/32,::1";

/** The policy destinations get in tests that build them directly. */
export const testEgress = new EgressPolicy({ allow: parseEgressAllow(TEST_EGRESS_ALLOW) });
