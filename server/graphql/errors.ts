import { GraphQLError } from "graphql";
import type { Logger } from "pino";
import { AppError } from "../platform/errors.ts";

interface FormattedError {
  message: string;
  path?: readonly (string | number)[];
  locations?: readonly { line: number; column: number }[];
  extensions: Record<string, unknown>;
}

/** GraphQL errors without a code of ours are query errors (parse, validation, limits). */
function flatten(error: unknown): GraphQLError[] {
  if (error instanceof GraphQLError) {
    const nested = (error.originalError as { errors?: unknown[] } | undefined)?.errors;
    if (Array.isArray(nested)) return nested.flatMap(flatten);
    return [error];
  }
  const nested = (error as { errors?: unknown[] } | null)?.errors;
  if (Array.isArray(nested)) return nested.flatMap(flatten);
  return [new GraphQLError(error instanceof Error ? error.message : String(error))];
}

export function formatError(error: unknown, production: boolean, log: Logger): FormattedError[] {
  return flatten(error).map((graphqlError) => {
    const original = graphqlError.originalError;
    const base = { path: graphqlError.path, locations: graphqlError.locations };
    if (original instanceof AppError) {
      return {
        ...base,
        message: original.message,
        extensions: original.fields.length > 0 ? { code: original.code, fields: original.fields } : { code: original.code },
      };
    }
    if (original && !(original instanceof GraphQLError) && graphqlError.path) {
      log.error({ err: original, path: graphqlError.path }, "resolver failed");
      return { ...base, message: "Something went wrong on our side.", extensions: { code: "INTERNAL" } };
    }
    // A query the schema refuses: parse and validation errors, depth/cost/alias/token limits, bad variables.
    const message = production ? graphqlError.message.replace(/ ?Did you mean .*\?$/, "") : graphqlError.message;
    return { ...base, message, extensions: { code: "BAD_USER_INPUT" } };
  });
}
