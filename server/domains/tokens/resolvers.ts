import { field, fieldWithInput } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { forbidden } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import type { Role } from "../../platform/roles.ts";
import type { Application } from "./keys.ts";
import * as service from "./service.ts";

export interface TokensApiDeps {
  events: DomainEvents;
  hash: service.KeyHasher;
}

/** An access token as the API shows it: never its key or the key's hash. */
export function accessTokenView(row: service.AccessTokenRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    role: row.role as Exclude<Role, "OWNER">,
    applications: row.applications as Application[],
    ipRateLimit: { rps: row.ipRps, rpm: row.ipRpm },
    isActive: row.revokedAt === null,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}

export function tokensResolvers(deps: TokensApiDeps): Resolvers {
  return {
    Query: {
      accessTokens: field("VIEWER", async ({ ctx, accountId, args }) =>
        (await service.listAccessTokens(ctx.db, accountId, args.application ?? undefined)).map(accessTokenView),
      ),
    },
    Mutation: {
      createAccessToken: fieldWithInput(
        "ADMIN",
        { schema: "access-token#/$defs/createInput" },
        async ({ ctx, accountId, principal, input }) => {
          // A key that could make keys would outlive its own revocation through them.
          if (principal.accessTokenId !== null)
            throw forbidden("An API key cannot create API keys: sign in to do this.");
          const made = await service.createAccessToken(ctx.db, deps.hash, accountId, principal.userId, input);
          return { accessToken: accessTokenView(made.row), key: made.key };
        },
      ),
      revokeAccessToken: field("ADMIN", async ({ ctx, accountId, args }) =>
        accessTokenView(await service.revokeAccessToken(ctx.db, deps.events, accountId, args.id)),
      ),
      updateAccessTokenIpRateLimit: fieldWithInput(
        "ADMIN",
        { schema: "access-token#/$defs/ipRateLimitInput" },
        async ({ ctx, accountId, args, input }) =>
          accessTokenView(await service.updateIpRateLimit(ctx.db, deps.events, accountId, args.id, input)),
      ),
    },
  };
}
