import DataLoader from "dataloader";
import { type Context, loaderOf, requireRole } from "../../graphql/context.ts";
import { type Call, field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import type { DomainEvents } from "../../platform/events.ts";
import * as service from "./service.ts";
import type { EntryKind } from "./store.ts";

// Batched per-row lookups for the Endpoint type's security fields: a list of endpoints asking for them
// costs one query per field, not one per row. They are part of the GraphQL layer (they read the request's
// caller), so they live here rather than beside the service.

const endpointOptions = (ctx: Context) =>
  new DataLoader<string, service.OptionsView>((ids) =>
    service.optionsOfEndpoints(ctx.db, requireRole(ctx, "VIEWER").accountId, ids),
  );

const endpointSecurity = (ctx: Context) =>
  new DataLoader<string, Awaited<ReturnType<typeof service.securityOfEndpoints>>[number]>((ids) =>
    service.securityOfEndpoints(ctx.db, requireRole(ctx, "VIEWER").accountId, ids),
  );

const endpointRpcMethods = (ctx: Context) =>
  new DataLoader<
    { id: string; network: string },
    Awaited<ReturnType<typeof service.rpcMethodsOfEndpoints>>[number],
    string
  >((endpoints) => service.rpcMethodsOfEndpoints(ctx.db, requireRole(ctx, "VIEWER").accountId, endpoints), {
    cacheKeyFn: (endpoint) => endpoint.id,
  });

const ok = (message: string) => ({ success: true, message, error: null });

/**
 * The console's own hosts, which may not become domain masks (a mask takes every request to its host), or
 * null when they are not known. Without PUBLIC_URL the console answers at any host, and the Host a request
 * names is its caller's to write: in production no host can be shown not to be the console's.
 */
function consoleHosts(ctx: Context): string[] | null {
  if (ctx.config.publicUrl) return [ctx.request.hostname, new URL(ctx.config.publicUrl).hostname];
  return ctx.config.production ? null : [ctx.request.hostname];
}

/** Changes to an endpoint's security reach the proxy (in every process) as events. */
export interface SecurityApiDeps {
  events: DomainEvents;
}

type EntrySchema = "referrerInput" | "ipInput" | "domainMaskInput" | "requestFilterInput";

/** The create and delete mutations of one kind of list entry (referrers, IPs, domain masks, request filters). */
function entryResolvers<F extends string, V>(
  kind: EntryKind,
  valueField: F,
  schema: EntrySchema,
  view: (row: { id: string; value: string }) => V,
) {
  return {
    create: (deps: SecurityApiDeps) =>
      fieldWithInput(
        "ADMIN",
        {
          schema: `security#/$defs/${schema}`,
          of: (args: { endpointId: string } & Record<F, string>) => ({ [valueField]: args[valueField] }),
        },
        async ({ ctx, principal, args }) => {
          const row = await service.createEntry(
            ctx.db,
            deps.events,
            principal,
            args.endpointId,
            kind,
            args[valueField],
            consoleHosts(ctx),
          );
          return view(row);
        },
      ),
    remove: (deps: SecurityApiDeps) =>
      field("ADMIN", async ({ ctx, principal, args }: Call<{ id: string }, unknown>) => {
        await service.deleteEntry(ctx.db, deps.events, principal, kind, args.id);
        return ok("Deleted.");
      }),
  };
}

const referrers = entryResolvers("REFERRER", "referrer", "referrerInput", (r) => ({ id: r.id, referrer: r.value }));
const ips = entryResolvers("IP", "ip", "ipInput", (r) => ({ id: r.id, ip: r.value }));
const domainMasks = entryResolvers("DOMAIN_MASK", "host", "domainMaskInput", (r) => ({ id: r.id, host: r.value }));
const requestFilters = entryResolvers("REQUEST_FILTER", "method", "requestFilterInput", (r) => ({
  id: r.id,
  method: r.value,
}));

export const securityResolvers = (deps: SecurityApiDeps): Resolvers => ({
  Query: {
    security: field("VIEWER", ({ ctx, accountId, args }) => service.securityOf(ctx.db, accountId, args.id)),
    endpointRpcMethods: field("VIEWER", ({ ctx, accountId, args }) =>
      service.rpcMethods(ctx.db, accountId, args.endpointId),
    ),
  },
  Endpoint: {
    tokenAuth: field(
      "VIEWER",
      async ({ ctx, parent }) => (await loaderOf(ctx, endpointOptions).load(parent.id)).tokens,
    ),
    security: field("VIEWER", ({ ctx, parent }) => loaderOf(ctx, endpointSecurity).load(parent.id)),
    rpcMethods: field("VIEWER", ({ ctx, parent }) => loaderOf(ctx, endpointRpcMethods).load(parent)),
  },
  Mutation: {
    updateOption: fieldWithInput(
      "ADMIN",
      { schema: "security#/$defs/updateOptionInput", of: (args) => ({ option: args.option, status: args.status }) },
      ({ ctx, principal, args, input }) =>
        service.updateOption(ctx.db, deps.events, principal, args.id, input.option, input.status === "ENABLED"),
    ),
    updateIpCustomHeader: fieldWithInput(
      "ADMIN",
      { schema: "security#/$defs/ipCustomHeaderInput", of: (args) => ({ header: args.header }) },
      ({ ctx, principal, args, input }) =>
        service.updateIpCustomHeader(ctx.db, deps.events, principal, args.id, input.header),
    ),
    createAuthToken: field("ADMIN", ({ ctx, principal, args }) =>
      service.createToken(ctx.db, deps.events, principal, args.id),
    ),
    deleteAuthToken: field("ADMIN", async ({ ctx, principal, args }) => {
      await service.deleteToken(ctx.db, deps.events, principal, args.id, args.tokenId);
      return ok("The token was deleted; requests using it are refused from now on.");
    }),
    createJwt: fieldWithInput(
      "ADMIN",
      {
        schema: "security#/$defs/jwtInput",
        of: (args) => ({ name: args.name, publicKey: args.publicKey, kid: args.kid }),
      },
      ({ ctx, principal, args, input }) => service.createJwt(ctx.db, deps.events, principal, args.id, input),
    ),
    deleteJwt: field("ADMIN", async ({ ctx, principal, args }) => {
      await service.deleteJwt(ctx.db, deps.events, principal, args.id, args.jwtId);
      return ok("The JWT key was deleted.");
    }),
    createReferrer: referrers.create(deps),
    deleteReferrer: referrers.remove(deps),
    createIp: ips.create(deps),
    deleteIp: ips.remove(deps),
    createDomainMask: domainMasks.create(deps),
    deleteDomainMask: domainMasks.remove(deps),
    createRequestFilter: requestFilters.create(deps),
    deleteRequestFilter: requestFilters.remove(deps),
    toggleRpcMethod: field("ADMIN", ({ ctx, principal, args }) =>
      service.toggleRpcMethod(ctx.db, deps.events, principal, args.endpointId, args.methodId),
    ),
  },
});
