import path from "node:path";
import type { Logger } from "pino";
import type { ChainNodes } from "./dataplane/chain/nodes.ts";
import { RpcClient } from "./dataplane/datasets/rpc.ts";
import { addMember, seedPlans, signUp } from "./domains/account/service.ts";
import { findUserByEmail } from "./domains/account/store.ts";
import { addTag, createEndpoint, type EndpointCreatedHook } from "./domains/endpoints/service.ts";
import { type AppConfig, persistentSecret } from "./platform/config.ts";
import type { Db } from "./platform/db/index.ts";
import { DomainEvents } from "./platform/events.ts";

export const DEMO_OWNER = "demo@nodeplane.local";
export const DEMO_VIEWER = "viewer@nodeplane.local";

/** The catalogue on every start; the demo account, its viewer and a few tagged endpoints on the first. */
export async function seed(db: Db, config: AppConfig, log: Logger, endpointCreatedHooks: EndpointCreatedHook[]) {
  await seedPlans(db);
  const secret = config.demoPassword
    ? { value: config.demoPassword, created: false }
    : persistentSecret(config, "demo-password");
  const firstStart = { demoEmail: DEMO_OWNER, demoPassword: secret.value, passwordCreated: secret.created };
  if (await findUserByEmail(db, DEMO_OWNER)) return firstStart;

  log.info("seeding the demo account");
  const { accountId } = await signUp(
    db,
    { email: DEMO_OWNER, password: secret.value, fullName: "Demo Owner", companyName: "Nodeplane Demo" },
    // The demo shows a paid plan's room: the free plan's two endpoints would be used up by the seed.
    { verified: true, planId: "b6_build" },
  );
  await addMember(db, accountId, {
    email: DEMO_VIEWER,
    password: secret.value,
    fullName: "Demo Viewer",
    role: "VIEWER",
  });
  // Seeding happens before any listener exists, so its events reach nobody.
  const events = new DomainEvents();
  const demo = [
    { chain: "ethereum", network: "ethereum-sepolia", label: "Wallet backend", tags: ["production", "wallet"] },
    { chain: "base", network: "base-sepolia", label: "Indexer", tags: ["staging"] },
  ];
  for (const item of demo) {
    const { endpoint } = await createEndpoint(db, events, endpointCreatedHooks, accountId, item);
    for (const tag of item.tags) await addTag(db, events, accountId, endpoint.id, tag);
  }
  return firstStart;
}

/**
 * The token add-ons' test contract set (ERC-20, ERC-721, ERC-1155 with a few transfers) on every local
 * chain that does not have it yet, so their answers can be checked against the chain. Runs in the
 * background once the nodes are up; a failure is logged, never fatal.
 */
export async function seedLocalChains(chainNodes: ChainNodes, config: AppConfig, log: Logger): Promise<void> {
  // Its packages (viem, solc) load here, after the service answers, not with the app.
  const { deployTestTokens } = await import("./dataplane/token-index/test-tokens.ts");
  for (const upstream of chainNodes.list().filter((u) => u.source === "local")) {
    const rpc = new RpcClient(upstream.httpUrl);
    try {
      const set = await deployTestTokens(rpc, path.join(config.dataDir, "solc"));
      if (set.deployed)
        log.info(
          { network: upstream.network, erc20: set.erc20, erc721: set.erc721, erc1155: set.erc1155 },
          `chain: ${upstream.network}: test tokens deployed (ERC-20 ${set.erc20.join(", ")}, ERC-721 ${set.erc721}, ERC-1155 ${set.erc1155})`,
        );
    } catch (error) {
      log.warn({ err: error, network: upstream.network }, `chain: ${upstream.network}: test tokens not deployed`);
    } finally {
      await rpc.close();
    }
  }
}
