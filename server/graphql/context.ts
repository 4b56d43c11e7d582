import type DataLoader from "dataloader";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { AppConfig } from "../platform/config.ts";
import type { Db } from "../platform/db/index.ts";
import { forbidden, unauthenticated } from "../platform/errors.ts";
import { type Role, roleAtLeast } from "../platform/roles.ts";
import type { ReadRecord } from "./response-cache.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** A GraphQL request's caller (null: signed out), read once by the API's preHandler (app.ts). */
    caller: Principal | null;
    /** A GraphQL request's read record, made by the same hook; null on every other route. */
    reads: ReadRecord | null;
  }
}

/**
 * Who is calling: a signed-in user acting in one account with one role, or an access token (an API key)
 * acting as its creator in its account with its own role.
 */
export interface Principal {
  userId: string;
  accountId: string;
  role: Role;
  /** The session's, when signed in; null for a call with an API key. */
  sessionTokenHash: string | null;
  /** The API key's, when the call carries one; null when signed in. */
  accessTokenId: string | null;
}

export interface Context {
  db: Db;
  config: AppConfig;
  log: Logger;
  principal: Principal | null;
  request: FastifyRequest;
  reply: FastifyReply;
  /** This request's DataLoaders, by the function that makes each (see {@link loaderOf}). */
  loaders: Map<unknown, DataLoader<unknown, unknown>>;
  /** Where this request's answers came from, for the response cache (response-cache.ts). */
  reads: ReadRecord;
}

/**
 * The request's DataLoader that `create` makes: the lookups a list's rows make one by one (a field
 * resolver per row) are collected and answered by one batched query.
 */
export function loaderOf<K, V>(ctx: Context, create: (ctx: Context) => DataLoader<K, V>): DataLoader<K, V> {
  let loader = ctx.loaders.get(create) as DataLoader<K, V> | undefined;
  if (!loader) {
    loader = create(ctx);
    ctx.loaders.set(create, loader as DataLoader<unknown, unknown>);
  }
  return loader;
}

/**
 * The one server-side permission check: the caller must be signed in and their role at least `role`
 * (VIEWER: any member). Resolvers reach it through `field` (field.ts).
 */
export function requireRole(ctx: Context, role: Role): Principal {
  const principal = ctx.principal;
  if (!principal) throw unauthenticated();
  if (!roleAtLeast(principal.role, role)) throw forbidden();
  return principal;
}
