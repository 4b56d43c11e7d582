import { describe, expect, it } from "vitest";
import { staticUpstreams } from "../../../server/dataplane/chain/nodes.ts";
import { EVM_DATASETS } from "../../../server/dataplane/datasets/reader.ts";
import type { CatalogueNetwork } from "../../../server/domains/catalogue/networks.ts";
import { FunctionRuns } from "../../../server/domains/functions/service.ts";
import { streamFunctions } from "../../../server/domains/functions/stream-port.ts";
import {
  datasetReason,
  destinationOptions,
  destinationReason,
  networkReason,
  streamPermissions,
} from "../../../server/domains/streams/permissions.ts";
import { DatasetProbes, type Probe } from "../../../server/domains/streams/probes.ts";
import type { StreamsServices } from "../../../server/domains/streams/runtime.ts";
import { EgressPolicy } from "../../../server/platform/egress.ts";
import { isRole, type Role, roleAtLeast, roles } from "../../../server/platform/roles.ts";

describe("roles", () => {
  /** Every (role, required) pair: OWNER > ADMIN > VIEWER. */
  const allowed: Record<Role, Record<Role, boolean>> = {
    VIEWER: { VIEWER: true, ADMIN: false, OWNER: false },
    ADMIN: { VIEWER: true, ADMIN: true, OWNER: false },
    OWNER: { VIEWER: true, ADMIN: true, OWNER: true },
  };
  it.each(roles.flatMap((role) => roles.map((required) => ({ role, required, ok: allowed[role][required] }))))(
    "$role where $required is required: $ok",
    ({ role, required, ok }) => {
      expect(roleAtLeast(role, required)).toBe(ok);
    },
  );

  it.each([
    { value: "OWNER", ok: true },
    { value: "VIEWER", ok: true },
    { value: "owner", ok: false },
    { value: "toString", ok: false },
    { value: "", ok: false },
    { value: 2, ok: false },
    { value: null, ok: false },
  ])("isRole($value) is $ok", ({ value, ok }) => {
    expect(isRole(value)).toBe(ok);
  });
});

const probe = (unavailable: Partial<Record<string, string>> = {}): Probe =>
  Object.fromEntries(
    EVM_DATASETS.map((d) => [d, d in unavailable ? { available: false, reason: unavailable[d] } : { available: true }]),
  ) as Probe;

describe("stream permissions", () => {
  it.each([
    {
      name: "a non-EVM chain",
      dataset: "BLOCK",
      evm: false,
      node: probe(),
      reason: "Streams read EVM networks only for now.",
    },
    { name: "a non-EVM dataset", dataset: "LEDGER", evm: true, node: probe(), reason: "LEDGER is not an EVM dataset." },
    {
      name: "no service to ask: the catalogue's rules only",
      dataset: "BLOCK",
      evm: true,
      node: "unchecked",
      reason: null,
    },
    {
      name: "no node for the network",
      dataset: "BLOCK",
      evm: true,
      node: null,
      reason: "No chain node serves n1 on this service.",
    },
    { name: "the node serves it", dataset: "LOGS", evm: true, node: probe(), reason: null },
    {
      name: "the node cannot serve it",
      dataset: "DEBUG_TRACE",
      evm: true,
      node: probe({ DEBUG_TRACE: "debug_traceBlockByNumber is not enabled" }),
      reason: "The n1 node cannot serve it: debug_traceBlockByNumber is not enabled.",
    },
  ] as const)("dataset: $name", ({ dataset, evm, node, reason }) => {
    expect(datasetReason(dataset, evm, "n1", node)).toBe(reason);
  });

  it.each([
    { name: "built", d: { value: "WEBHOOK", label: "Webhook" }, functions: false, reason: null },
    {
      name: "not built",
      d: { value: "KAFKA", label: "Kafka", notBuilt: true },
      functions: true,
      reason: "Kafka destinations are not available yet.",
    },
    {
      name: "FUNCTION with the functions runtime",
      d: { value: "FUNCTION", label: "Function" },
      functions: true,
      reason: null,
    },
    {
      name: "FUNCTION without it",
      d: { value: "FUNCTION", label: "Function" },
      functions: false,
      reason: "Function destinations need the functions runtime, which is not connected to this service.",
    },
  ] as const)("destination: $name", ({ d, functions, reason }) => {
    expect(destinationReason(d, functions)).toBe(reason);
  });

  it("without a service, FUNCTION and the destinations not built are disabled, the rest enabled", () => {
    const disabled = destinationOptions(undefined)
      .filter((o) => o.disabled)
      .map((o) => o.value);
    expect(disabled).toEqual(["FUNCTION", "KAFKA", "MONGO", "MYSQL", "REDIS"]);
  });

  const network = (over: Partial<CatalogueNetwork>): CatalogueNetwork => ({
    value: "n1",
    label: "N1",
    canonicalNetwork: "n1",
    chainId: 1,
    isTestnet: false,
    ...over,
  });
  it.each([
    { name: "selectable", n: network({}), reason: null },
    { name: "beta is still selectable", n: network({ beta: true }), reason: null },
    { name: "disabled", n: network({ disabled: true }), reason: "This network is disabled." },
    { name: "coming soon", n: network({ comingSoon: true }), reason: "This network is coming soon." },
    {
      name: "disabled wins over coming soon",
      n: network({ disabled: true, comingSoon: true }),
      reason: "This network is disabled.",
    },
  ])("network: $name", ({ n, reason }) => {
    expect(networkReason(n)).toBe(reason);
  });

  it("marks paid-only networks needsUpgrade on the free plan only, and a chain when all its networks are", async () => {
    // A service with no chain nodes: no node is asked, so this runs without a network.
    const services: StreamsServices = {
      streams: {
        upstreams: staticUpstreams([]),
        wake: () => {},
        mailer: null,
        destinationDeps: { egress: new EgressPolicy() },
        filterHelpers: () => {
          throw new Error("no filter runs in this test");
        },
        functions: streamFunctions(
          new FunctionRuns(() => {
            throw new Error("no function runs in this test");
          }),
        ),
        probes: new DatasetProbes(),
      },
    };
    const free = await streamPermissions(services, 0);
    const paid = await streamPermissions(services, 4900);
    const fantom = (p: typeof free) => p.chainConfigs.find((c) => c.chain === "fantom");
    const bitcoin = (p: typeof free) => p.chainConfigs.find((c) => c.chain === "bitcoin");
    expect(fantom(free)?.networks.map((n) => n.needsUpgrade)).toEqual([true]);
    expect(fantom(free)?.needsUpgrade).toBe(true);
    expect(fantom(paid)?.needsUpgrade).toBe(false);
    expect(bitcoin(free)?.networks.map((n) => [n.value, n.needsUpgrade, n.beta])).toEqual([
      ["bitcoin-mainnet", true, false],
      ["bitcoin-testnet", false, true],
    ]);
    expect(bitcoin(free)?.needsUpgrade).toBe(false);
    const xrp = free.chainConfigs.find((c) => c.chain === "xrp");
    expect(xrp?.networks.find((n) => n.value === "xrp-testnet")).toMatchObject({ disabled: true, comingSoon: true });
    expect(xrp?.disabled).toBe(false);
  });
});
