import type { GraphQLScalarType } from "graphql";
import type { Context } from "./context.ts";

/** One resolver; each declares its own parent and argument types. */
export type ResolverFn<P, A> = (parent: P, args: A, ctx: Context) => unknown;

// `any` because each resolver narrows its own parent and args; the map only collects them.
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Resolvers = Record<string, Record<string, ResolverFn<any, any>> | GraphQLScalarType>;

export const resolver = <P, A>(fn: ResolverFn<P, A>) => fn;

/** Merges the resolver maps of every domain; a field defined twice is a programming error. */
export function mergeResolvers(maps: Resolvers[]): Resolvers {
  const merged: Resolvers = {};
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map)) {
      if (typeof (fields as GraphQLScalarType).serialize === "function") {
        merged[type] = fields;
        continue;
      }
      const target = (merged[type] ?? {}) as Record<string, unknown>;
      merged[type] = target as Resolvers[string];
      for (const [field, fn] of Object.entries(fields)) {
        if (field in target) throw new Error(`Resolver ${type}.${field} is defined twice`);
        target[field] = fn;
      }
    }
  }
  return merged;
}
