import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { StreamsServices } from "../streams/runtime.ts";
import { webhookResolvers } from "./resolvers.ts";

/** Webhooks: streams of one kind, with their own settings and screens. */
export const webhooksPlugin: DomainPlugin<StreamsServices> = async (_app, { deps, api }) => {
  api.add(webhookResolvers(deps));
};
