import { field, fieldWithInput } from "../../../graphql/field.ts";
import type { Resolvers } from "../../../graphql/resolvers.ts";
import {
  type CryptoChargeStatus,
  type CryptoChargeType,
  type CryptoProvider,
  chargeTarget,
  providerStatus,
} from "./rules.ts";
import * as service from "./service.ts";

/**
 * A charge as the API shows it: amounts in wei and ether, its status in the provider's words too. viem
 * (~0.3 s to load) is loaded at the first charge shown, not at every start.
 */
async function chargeView(deps: service.CryptoChargeDeps, c: service.CryptoChargeRow) {
  const { formatEther } = await import("viem");
  const status = c.status as CryptoChargeStatus;
  const chainId = deps.upstreams.get(c.network)?.chainId ?? null;
  return {
    id: c.id,
    code: c.code,
    provider: c.provider,
    status,
    providerStatus: providerStatus(c.provider as CryptoProvider, status),
    invoiceId: c.invoiceId,
    type: c.type as CryptoChargeType | null,
    amountCents: c.amountCents,
    network: c.network,
    chainId,
    address: c.address,
    amountWei: c.amountWei,
    amountEth: formatEther(BigInt(c.amountWei)),
    receivedWei: c.receivedWei,
    receivedEth: formatEther(BigInt(c.receivedWei)),
    confirmationsRequired: deps.settings.confirmations,
    confirmedBlock: c.confirmedBlock,
    paymentUri: `ethereum:${c.address}${chainId === null ? "" : `@${chainId}`}?value=${c.amountWei}`,
    expiresAt: c.expiresAt,
    confirmedAt: c.confirmedAt,
    createdAt: c.createdAt,
  };
}

export function cryptoChargeResolvers(deps: service.CryptoChargeDeps): Resolvers {
  const read = (provider: CryptoProvider, code: string, accountId: string) =>
    service.chargeOf(deps, accountId, provider, code).then((c) => chargeView(deps, c));
  return {
    Query: {
      coinbaseChargeStatus: field("VIEWER", ({ accountId, args }) => read("COINBASE", args.chargeCode, accountId)),
      stripePaymentIntentStatus: field("VIEWER", ({ accountId, args }) =>
        read("STRIPE", args.paymentIntentId, accountId),
      ),
    },
    Mutation: {
      createCoinbaseCharge: fieldWithInput(
        "ADMIN",
        { schema: "crypto-charge#/$defs/createInput", of: (args) => args.input },
        async ({ accountId, input }) =>
          chargeView(deps, await service.createCryptoCharge(deps, accountId, "COINBASE", chargeTarget(input))),
      ),
      createStripeCryptoCharge: fieldWithInput(
        "ADMIN",
        { schema: "crypto-charge#/$defs/createInput", of: (args) => args.input },
        async ({ accountId, input }) => {
          const charge = await service.createCryptoCharge(deps, accountId, "STRIPE", chargeTarget(input));
          return { paymentIntentId: charge.code, clientSecret: null, charge: await chargeView(deps, charge) };
        },
      ),
    },
  };
}
