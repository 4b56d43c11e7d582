import type { GraphQLScalarType } from "graphql";
import type { Resolvers } from "./generated/resolvers.ts";

export type { Resolvers } from "./generated/resolvers.ts";

/** Merges the resolver maps of every domain; a field defined twice is a programming error. */
export function mergeResolvers(maps: Resolvers[]): Resolvers {
  const merged: Record<string, Record<string, unknown> | GraphQLScalarType> = {};
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map) as [string, Record<string, unknown> | GraphQLScalarType][]) {
      if (typeof (fields as GraphQLScalarType).serialize === "function") {
        merged[type] = fields;
        continue;
      }
      const target = (merged[type] ?? {}) as Record<string, unknown>;
      merged[type] = target;
      for (const [field, fn] of Object.entries(fields)) {
        if (field in target) throw new Error(`Resolver ${type}.${field} is defined twice`);
        target[field] = fn;
      }
    }
  }
  // Each map was checked against Resolvers on its own; the merge only joins their fields.
  return merged as Resolvers;
}
