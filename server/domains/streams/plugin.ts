import type { DomainPlugin } from "../../graphql/plugin.ts";
import { streamResolvers } from "./resolvers.ts";
import type { StreamsServices } from "./runtime.ts";

/** Streams: their settings, lifecycle, payload previews, filter and destination tests, deliveries. */
export const streamsPlugin: DomainPlugin<StreamsServices> = async (_app, { deps, api }) => {
  api.add(streamResolvers(deps));
};
