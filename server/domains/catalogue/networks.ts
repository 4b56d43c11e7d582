import { readFileSync } from "node:fs";
import path from "node:path";
import { badInput } from "../../platform/errors.ts";

export interface CatalogueNetwork {
  value: string;
  label: string;
  canonicalNetwork: string;
  chainId: number | null;
  isTestnet: boolean;
  comingSoon?: boolean;
  beta?: boolean;
  disabled?: boolean;
  /** Needs a paid plan; shown as needsUpgrade on the free plan. */
  paidOnly?: boolean;
}

export interface CatalogueChain {
  chain: string;
  label: string;
  chainCompatibility: string;
  icon: string;
  networks: CatalogueNetwork[];
}

const file = path.resolve(import.meta.dirname, "../../../schemas/catalogue/networks.json");
const catalogue = JSON.parse(readFileSync(file, "utf8")) as { chains: CatalogueChain[] };

export const chains: readonly CatalogueChain[] = catalogue.chains;

/** The catalogue's networks by value: a lookup table read from its file, never changed. */
const byNetwork: ReadonlyMap<string, { chain: CatalogueChain; network: CatalogueNetwork }> = new Map(
  chains.flatMap((chain) => chain.networks.map((network) => [network.value, { chain, network }] as const)),
);

export function findNetwork(value: string) {
  return byNetwork.get(value);
}

/** A network the caller names: one not in the catalogue is their mistake, named at `pointer`, before any call. */
export function catalogueNetwork(value: string, pointer = "/network") {
  const found = byNetwork.get(value);
  if (!found) throw badInput([{ pointer, message: "This network is not in the catalogue." }]);
  return found;
}

/** Whether the account's plan may use a network: the one rule behind needsUpgrade. */
export const needsUpgrade = (network: CatalogueNetwork, planPriceCents: number) =>
  network.paidOnly === true && planPriceCents === 0;

/** Whether a network can be chosen for something new at all. */
export const isSelectable = (network: CatalogueNetwork) => !network.disabled && !network.comingSoon;
