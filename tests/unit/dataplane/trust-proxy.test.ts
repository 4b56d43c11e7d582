import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultSecurityOptions } from "../../../server/dataplane/proxy/endpoint.ts";
import { trustedProxies } from "../../../server/platform/client-address.ts";
import { call, type Harness, rpc, startHarness } from "./harness.ts";

// An endpoint's IP allowlist behind the operator's reverse proxy: the client is the address the proxy
// names, not the proxy's own (which would pass every client, or none).
let behindProxy: Harness;
let direct: Harness;

beforeAll(async () => {
  behindProxy = await startHarness({ trustsProxy: trustedProxies("127.0.0.1") ?? undefined });
  direct = await startHarness();
}, 60_000);

afterAll(async () => {
  await behindProxy?.close();
  await direct?.close();
});

const allowlist = { options: { ...defaultSecurityOptions(), ips: true }, ips: ["203.0.113.0/24"] };

it("with the peer trusted, the allowlist judges the client X-Forwarded-For names", async () => {
  behindProxy.put({ exId: "listed", ...allowlist });
  const allowed = await rpc(behindProxy.port, "/rpc/listed", call("eth_chainId"), {
    "x-forwarded-for": "198.51.100.9, 203.0.113.7",
  });
  expect(allowed.status, allowed.text).toBe(200);
  const refused = await rpc(behindProxy.port, "/rpc/listed", call("eth_chainId"), {
    "x-forwarded-for": "203.0.113.7, 198.51.100.9",
  });
  expect((refused.body as { error: { code: number } }).error.code).toBe(-32003);
});

it("without NODEPLANE_TRUST_PROXY, X-Forwarded-For is the client's word and is not read", async () => {
  direct.put({ exId: "listed", ...allowlist });
  const refused = await rpc(direct.port, "/rpc/listed", call("eth_chainId"), { "x-forwarded-for": "203.0.113.7" });
  expect((refused.body as { error: { code: number } }).error.code).toBe(-32003);
});
