import type { Logger } from "pino";
import { AppError } from "../platform/errors.ts";

interface GraphQLErrorLike {
  message: string;
  path?: readonly (string | number)[];
  locations?: readonly { line: number; column: number }[];
  originalError?: unknown;
}

interface FormattedError {
  message: string;
  path?: readonly (string | number)[];
  locations?: readonly { line: number; column: number }[];
  extensions: Record<string, unknown>;
}

// Duck-typed rather than `instanceof GraphQLError`: Mercurius may load the CommonJS copy of graphql.
const isGraphQLError = (value: unknown): value is GraphQLErrorLike =>
  typeof value === "object" && value !== null && (value as { name?: string }).name === "GraphQLError";

function flatten(error: unknown): GraphQLErrorLike[] {
  const nested = (error as { errors?: unknown } | null)?.errors;
  if (Array.isArray(nested)) return nested.flatMap(flatten);
  const nestedOriginal = (error as { originalError?: { errors?: unknown } } | null)?.originalError?.errors;
  if (Array.isArray(nestedOriginal)) return nestedOriginal.flatMap(flatten);
  if (error instanceof AppError) return [{ message: error.message, originalError: error }];
  if (isGraphQLError(error)) return [error];
  return [{ message: error instanceof Error ? error.message : String(error), originalError: error }];
}

/** Gives every error a stable code; what is not ours is either a refused query or an internal failure. */
export function formatError(error: unknown, production: boolean, log: Logger): FormattedError[] {
  return flatten(error).map((graphqlError) => {
    const original = graphqlError.originalError;
    const base = { path: graphqlError.path, locations: graphqlError.locations };
    if (original instanceof AppError) {
      return {
        ...base,
        message: original.message,
        extensions:
          original.fields.length > 0 ? { code: original.code, fields: original.fields } : { code: original.code },
      };
    }
    if (original && !isGraphQLError(original) && graphqlError.path) {
      log.error({ err: original, path: graphqlError.path }, "resolver failed");
      return { ...base, message: "Something went wrong on our side.", extensions: { code: "INTERNAL" } };
    }
    // A query the schema refuses: parse and validation errors, depth/cost/alias/token limits, bad variables.
    const message = production ? graphqlError.message.replace(/ ?Did you mean .*\?$/, "") : graphqlError.message;
    return { ...base, message, extensions: { code: "BAD_USER_INPUT" } };
  });
}
