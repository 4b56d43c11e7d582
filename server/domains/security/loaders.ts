// Batched per-row lookups for the Endpoint type's security fields: a list of endpoints asking for them
// costs one query per field, not one per row.
import DataLoader from "dataloader";
import { type Context, requireRole } from "../../graphql/context.ts";
import * as service from "./service.ts";

/** The parent an Endpoint field resolver gets: an endpoint of the caller's account. */
export interface EndpointParent {
  id: string;
  network: string;
}

export const endpointOptions = (ctx: Context) =>
  new DataLoader<string, service.OptionsView>((ids) =>
    service.optionsOfEndpoints(ctx.db, requireRole(ctx, "VIEWER").accountId, ids),
  );

export const endpointSecurity = (ctx: Context) =>
  new DataLoader<string, Awaited<ReturnType<typeof service.securityOfEndpoints>>[number]>((ids) =>
    service.securityOfEndpoints(ctx.db, requireRole(ctx, "VIEWER").accountId, ids),
  );

export const endpointRpcMethods = (ctx: Context) =>
  new DataLoader<EndpointParent, Awaited<ReturnType<typeof service.rpcMethodsOfEndpoints>>[number], string>(
    (endpoints) => service.rpcMethodsOfEndpoints(ctx.db, requireRole(ctx, "VIEWER").accountId, endpoints),
    { cacheKeyFn: (endpoint) => endpoint.id },
  );
