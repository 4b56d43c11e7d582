import type { FastifyPluginAsync } from "fastify";
import { mergeResolvers, type Resolvers } from "./resolvers.ts";

/**
 * Where the domains' plugins add their resolver maps while they are registered. The API itself (Mercurius,
 * one executable schema from schemas/api.graphql) is registered once, after them, with their merge: a
 * field two maps define is refused there (mergeResolvers), and the response cache reads the same map.
 */
export class ResolverCollector {
  private readonly maps: Resolvers[] = [];

  add(map: Resolvers): void {
    this.maps.push(map);
  }

  merged(): Resolvers {
    return mergeResolvers(this.maps);
  }
}

/** What a domain's plugin is given: what it needs (`deps`, named by the domain), and where its resolvers go. */
export interface DomainPluginOptions<Deps extends object> {
  deps: Deps;
  api: ResolverCollector;
}

/**
 * One area of the service as a Fastify plugin (Fastify's encapsulation: registered with `app.register`,
 * its routes, hooks and body parsers stay in a context of its own). It reaches nothing but its options:
 * the long-lived parts it uses are handed to it by app.ts, where a reader sees every area's wiring.
 */
export type DomainPlugin<Deps extends object> = FastifyPluginAsync<DomainPluginOptions<Deps>>;
