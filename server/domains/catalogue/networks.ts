import { readFileSync } from "node:fs";
import path from "node:path";

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

const byNetwork = new Map(
  chains.flatMap((chain) => chain.networks.map((network) => [network.value, { chain, network }] as const)),
);

export function findNetwork(value: string) {
  return byNetwork.get(value);
}

/** Whether the account's plan may use a network: the one rule behind needsUpgrade. */
export const needsUpgrade = (network: CatalogueNetwork, planPriceCents: number) =>
  network.paidOnly === true && planPriceCents === 0;

/** Whether a network can be chosen for something new at all. */
export const isSelectable = (network: CatalogueNetwork) => !network.disabled && !network.comingSoon;
