import type { SecurityOptionName } from "../../dataplane/proxy/endpoint.ts";
import { type Context, loaderOf, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { validateInput } from "../../platform/validation.ts";
import { type EndpointParent, endpointOptions, endpointRpcMethods, endpointSecurity } from "./loaders.ts";
import * as service from "./service.ts";
import type { EntryKind } from "./store.ts";

const ok = (message: string) => ({ success: true, message, error: null });

/** The console's own host may not become a domain mask: it would take the console's traffic. */
function reservedHosts(ctx: Context): string[] {
  const hosts = [ctx.request.hostname];
  if (ctx.config.publicUrl) hosts.push(new URL(ctx.config.publicUrl).hostname);
  return hosts;
}

function entryResolvers(
  kind: EntryKind,
  create: string,
  remove: string,
  field: string,
  schema: string,
  view: (row: { id: string; value: string }) => unknown,
) {
  return {
    [create]: async (_: unknown, args: Record<string, string>, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<Record<string, string>>(`security#/$defs/${schema}`, { [field]: args[field] });
      const row = await service.createEntry(
        ctx.db,
        ctx.services.events,
        accountId,
        args.endpointId,
        kind,
        input[field],
        reservedHosts(ctx),
      );
      return view(row);
    },
    [remove]: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      await service.deleteEntry(ctx.db, ctx.services.events, accountId, kind, args.id);
      return ok("Deleted.");
    },
  };
}

export const securityResolvers: Resolvers = {
  Query: {
    security: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return service.securityOf(ctx.db, accountId, args.id);
    },
    endpointRpcMethods: async (_: unknown, args: { endpointId: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return service.rpcMethods(ctx.db, accountId, args.endpointId);
    },
  },
  Endpoint: {
    tokenAuth: async (parent: EndpointParent, _: unknown, ctx: Context) =>
      (await loaderOf(ctx, endpointOptions).load(parent.id)).tokens,
    security: (parent: EndpointParent, _: unknown, ctx: Context) => loaderOf(ctx, endpointSecurity).load(parent.id),
    rpcMethods: (parent: EndpointParent, _: unknown, ctx: Context) => loaderOf(ctx, endpointRpcMethods).load(parent),
  },
  Mutation: {
    updateOption: async (_: unknown, args: { id: string; option: string; status: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<{ option: SecurityOptionName; status: "ENABLED" | "DISABLED" }>(
        "security#/$defs/updateOptionInput",
        {
          option: args.option,
          status: args.status,
        },
      );
      return service.updateOption(
        ctx.db,
        ctx.services.events,
        accountId,
        args.id,
        input.option,
        input.status === "ENABLED",
      );
    },
    updateIpCustomHeader: async (_: unknown, args: { id: string; header: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<{ header: string }>("security#/$defs/ipCustomHeaderInput", { header: args.header });
      return service.updateIpCustomHeader(ctx.db, ctx.services.events, accountId, args.id, input.header);
    },
    createAuthToken: async (_: unknown, args: { id: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return service.createToken(ctx.db, ctx.services.events, accountId, args.id);
    },
    deleteAuthToken: async (_: unknown, args: { id: string; tokenId: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      await service.deleteToken(ctx.db, ctx.services.events, accountId, args.id, args.tokenId);
      return ok("The token was deleted; requests using it are refused from now on.");
    },
    createJwt: async (_: unknown, args: { id: string; name: string; publicKey: string; kid: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      const input = validateInput<{ name: string; publicKey: string; kid: string }>("security#/$defs/jwtInput", {
        name: args.name,
        publicKey: args.publicKey,
        kid: args.kid,
      });
      return service.createJwt(ctx.db, ctx.services.events, accountId, args.id, input);
    },
    deleteJwt: async (_: unknown, args: { id: string; jwtId: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      await service.deleteJwt(ctx.db, ctx.services.events, accountId, args.id, args.jwtId);
      return ok("The JWT key was deleted.");
    },
    ...entryResolvers("REFERRER", "createReferrer", "deleteReferrer", "referrer", "referrerInput", (r) => ({
      id: r.id,
      referrer: r.value,
    })),
    ...entryResolvers("IP", "createIp", "deleteIp", "ip", "ipInput", (r) => ({ id: r.id, ip: r.value })),
    ...entryResolvers("DOMAIN_MASK", "createDomainMask", "deleteDomainMask", "host", "domainMaskInput", (r) => ({
      id: r.id,
      host: r.value,
    })),
    ...entryResolvers(
      "REQUEST_FILTER",
      "createRequestFilter",
      "deleteRequestFilter",
      "method",
      "requestFilterInput",
      (r) => ({
        id: r.id,
        method: r.value,
      }),
    ),
    toggleRpcMethod: async (_: unknown, args: { endpointId: string; methodId: string }, ctx: Context) => {
      const { accountId } = requireRole(ctx, "ADMIN");
      return service.toggleRpcMethod(ctx.db, ctx.services.events, accountId, args.endpointId, args.methodId);
    },
  },
};
