import { EVM_DATASETS, type EvmDataset } from "../../dataplane/datasets/reader.ts";
import { BZIP2_UNSUPPORTED } from "../../dataplane/destinations/common.ts";
import { loadEntitySchemas } from "../../platform/validation.ts";
import {
  type CatalogueChain,
  type CatalogueNetwork,
  chains,
  findNetwork,
  needsUpgrade,
} from "../catalogue/networks.ts";
import type { Probe } from "./probes.ts";
import { type StreamsServices, streamsRuntime } from "./runtime.ts";

/**
 * What a stream may use: destinations, compressions, and per chain and network the datasets. Built
 * from the networks catalogue, the chain nodes this service has, and what each node answers when
 * probed. Anything that cannot be served is listed as disabled with a reason, never left out or faked.
 * Stream creation refuses exactly what this marks disabled ({@link unavailableFields}).
 */

export interface Option {
  value: string;
  label: string;
  disabled: boolean;
  reason: string | null;
}

/** The dataset enum and its labels, declared once in the stream entity schema. */
const datasetSchema = loadEntitySchemas().stream.$defs as {
  dataset: { enum: string[]; "x-enumLabels": Record<string, string> };
};
const DATASET_LABELS = datasetSchema.dataset["x-enumLabels"];
/** The EVM datasets first, in the reader's order, then the others. */
const ALL_DATASETS: readonly string[] = [
  ...EVM_DATASETS,
  ...datasetSchema.dataset.enum.filter((value) => !(EVM_DATASETS as readonly string[]).includes(value)),
];

const DESTINATIONS: readonly { value: string; label: string; notBuilt?: true }[] = [
  { value: "WEBHOOK", label: "Webhook" },
  { value: "S3", label: "Amazon S3" },
  { value: "AZURE", label: "Azure Blob Storage" },
  { value: "POSTGRES", label: "PostgreSQL" },
  { value: "SNOWFLAKE", label: "Snowflake" },
  { value: "FUNCTION", label: "Function" },
  { value: "KAFKA", label: "Kafka", notBuilt: true },
  { value: "MONGO", label: "MongoDB", notBuilt: true },
  { value: "MYSQL", label: "MySQL", notBuilt: true },
  { value: "REDIS", label: "Redis", notBuilt: true },
];

/** Why a destination cannot be chosen, or null: not built yet, or (FUNCTION) no functions runtime connected. */
export function destinationReason(
  destination: { value: string; label: string; notBuilt?: true },
  functionsConnected: boolean,
): string | null {
  if (destination.notBuilt) return `${destination.label} destinations are not available yet.`;
  if (destination.value === "FUNCTION" && !functionsConnected)
    return "Function destinations need the functions runtime, which is not connected to this service.";
  return null;
}

export function destinationOptions(services: StreamsServices | undefined): Option[] {
  const runtime = services && streamsRuntime(services);
  const functionsConnected = Boolean(runtime?.destinationDeps?.functionInvoker);
  return DESTINATIONS.map((destination) => {
    const reason = destinationReason(destination, functionsConnected);
    return { value: destination.value, label: destination.label, disabled: reason !== null, reason };
  });
}

export function compressionOptions(): Option[] {
  return [
    { value: "NONE", label: "None", disabled: false, reason: null },
    { value: "GZIP", label: "Gzip", disabled: false, reason: null },
    { value: "BZIP2", label: "Bzip2", disabled: true, reason: BZIP2_UNSUPPORTED },
  ];
}

/** Without services (a caller that has none to give) only the catalogue's rules apply, not the node's. */
export async function datasetOptions(
  services: StreamsServices | undefined,
  chain: CatalogueChain,
  network: CatalogueNetwork,
) {
  const evm = chain.chainCompatibility === "evm";
  const runtime = evm && services ? streamsRuntime(services) : undefined;
  const upstream = runtime?.upstreams.get(network.value);
  const probe = runtime && upstream ? await runtime.probes.of(upstream) : null;
  return ALL_DATASETS.map((value): Option => {
    const reason = datasetReason(value, evm, network.value, services ? probe : "unchecked");
    return { value, label: DATASET_LABELS[value], disabled: reason !== null, reason };
  });
}

/**
 * Why a dataset cannot be chosen on a network, or null: the catalogue's rules (EVM chains and datasets
 * only), then the network's chain node: `node` is what it answered when probed, null when the service
 * has none for the network, "unchecked" when there is no service to ask (the catalogue's rules only).
 */
export function datasetReason(
  dataset: string,
  evm: boolean,
  network: string,
  node: Probe | null | "unchecked",
): string | null {
  if (!evm) return "Streams read EVM networks only for now.";
  if (!(EVM_DATASETS as readonly string[]).includes(dataset)) return `${dataset} is not an EVM dataset.`;
  if (node === "unchecked") return null;
  if (!node) return `No chain node serves ${network} on this service.`;
  const state = node[dataset as EvmDataset];
  return state.available ? null : `The ${network} node cannot serve it: ${state.reason ?? "unavailable"}.`;
}

/** Why a network cannot be chosen, or null: disabled, or coming soon. */
export function networkReason(network: CatalogueNetwork): string | null {
  if (network.disabled) return "This network is disabled.";
  if (network.comingSoon) return "This network is coming soon.";
  return null;
}

/** The stream permissions for an account on a plan costing planPriceCents (only needsUpgrade depends on it). */
export async function streamPermissions(services: StreamsServices, planPriceCents: number) {
  const chainConfigs = await Promise.all(
    chains.map(async (chain) => {
      const networks = await Promise.all(
        chain.networks.map(async (network) => {
          const reason = networkReason(network);
          return {
            value: network.value,
            label: network.label,
            disabled: reason !== null,
            comingSoon: network.comingSoon === true,
            beta: network.beta === true,
            needsUpgrade: needsUpgrade(network, planPriceCents),
            reason,
            datasets: await datasetOptions(services, chain, network),
          };
        }),
      );
      return {
        chain: chain.chain,
        label: chain.label,
        icon: chain.icon,
        disabled: networks.every((n) => n.disabled),
        comingSoon: networks.every((n) => n.comingSoon),
        beta: networks.every((n) => n.beta),
        needsUpgrade: networks.every((n) => n.needsUpgrade),
        networks,
      };
    }),
  );
  const networkDatasets = chainConfigs.flatMap((chain) =>
    chain.networks.flatMap((network) => network.datasets.map((dataset) => ({ network: network.value, ...dataset }))),
  );
  return {
    destinations: destinationOptions(services),
    compression: compressionOptions(),
    networkDatasets,
    // The engine holds back keepDistanceFromTip blocks and re-delivers reorged blocks (fixBlockReorgs).
    blockTipDelay: true,
    realTimeReorg: true,
    chainConfigs,
  };
}

/**
 * The input errors for a stream whose destination or dataset the permissions mark disabled. The
 * network's own rules (in the catalogue, EVM) are checked by the service before this. Without
 * services only the catalogue's rules apply (FUNCTION then counts as unavailable).
 */
export async function unavailableFields(
  services: StreamsServices | undefined,
  s: { network: string; dataset: string; destination: string },
): Promise<{ pointer: string; message: string }[]> {
  const fields: { pointer: string; message: string }[] = [];
  const destination = destinationOptions(services).find((d) => d.value === s.destination);
  if (destination?.disabled) fields.push({ pointer: "/destination", message: destination.reason ?? "" });
  const found = findNetwork(s.network);
  if (found) {
    const dataset = (await datasetOptions(services, found.chain, found.network)).find((d) => d.value === s.dataset);
    if (dataset?.disabled) fields.push({ pointer: "/dataset", message: dataset.reason ?? "" });
  }
  return fields;
}
