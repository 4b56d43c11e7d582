import type { UpstreamMap } from "../../dataplane/chain/nodes.ts";
import { field } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { planPriceCents } from "../account/service.ts";
import { chains, needsUpgrade } from "./networks.ts";

/** The chain nodes this installation has: which networks it serves. */
export interface CatalogueApiDeps {
  upstreams: UpstreamMap;
}

export const catalogueResolvers = (deps: CatalogueApiDeps): Resolvers => ({
  Query: {
    chains: field("VIEWER", async ({ ctx, accountId }) => {
      const price = await planPriceCents(ctx.db, accountId);
      return chains.map((chain) => {
        const networks = chain.networks.map((network) => ({
          value: network.value,
          label: network.label,
          chain: chain.chain,
          canonicalNetwork: network.canonicalNetwork,
          chainId: network.chainId,
          isTestnet: network.isTestnet,
          disabled: network.disabled === true,
          comingSoon: network.comingSoon === true,
          beta: network.beta === true,
          needsUpgrade: needsUpgrade(network, price),
          served: deps.upstreams.get(network.value) !== undefined,
        }));
        return {
          chain: chain.chain,
          label: chain.label,
          chainCompatibility: chain.chainCompatibility,
          icon: chain.icon,
          disabled: networks.every((n) => n.disabled),
          comingSoon: networks.every((n) => n.comingSoon),
          beta: networks.every((n) => n.beta),
          needsUpgrade: networks.every((n) => n.needsUpgrade),
          networks,
        };
      });
    }),
  },
});
