import type { Logger } from "pino";
import { AppError } from "../platform/errors.ts";

interface GraphQLErrorLike {
  message: string;
  path?: readonly (string | number)[];
  locations?: readonly { line: number; column: number }[];
  originalError?: unknown;
  /** An error that is neither ours nor the query's: its message is not for the caller. */
  internal?: boolean;
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
  // Fastify's own refusals of the request (a body that is not JSON, too large): their messages are for the caller.
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  const refused = typeof status === "number" && status >= 400 && status < 500;
  return [
    { message: error instanceof Error ? error.message : String(error), originalError: error, internal: !refused },
  ];
}

/** What the caller is told of a failure on our side; the request id finds it in the log. */
export const INTERNAL_MESSAGE = "Something went wrong on our side.";

export interface FormatOptions {
  production: boolean;
  log: Logger;
  /** The request's id: INTERNAL answers carry it and the log line has it. */
  requestId: string;
}

/**
 * The JSON pointer of a variable its type refused, from graphql-js's message
 * (`Variable "$input" got invalid value … at "input.tags[0]"; …` → /input/tags/0), so a bad
 * variable names its field as the resolvers' own input errors do.
 */
export function variablePointer(message: string): string | null {
  const variable = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" got invalid value/.exec(message);
  if (!variable) return null;
  const at = /^Variable "\$[_0-9A-Za-z]+" got invalid value .*? at "([^"]+)"; /s.exec(message);
  const path = at ? at[1] : variable[1];
  return `/${path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .join("/")}`;
}

/**
 * Gives every error a stable code; what is not ours is either a refused query or an internal failure.
 * An internal failure says only INTERNAL and the request id; what failed goes to the log.
 */
export function formatError(error: unknown, { production, log, requestId }: FormatOptions): FormattedError[] {
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
    if (graphqlError.internal || (original && !isGraphQLError(original) && graphqlError.path)) {
      log.error(
        { err: original, path: graphqlError.path, reqId: requestId },
        graphqlError.path ? "resolver failed" : "request failed before its resolvers ran",
      );
      return { ...base, message: INTERNAL_MESSAGE, extensions: { code: "INTERNAL", requestId } };
    }
    // A query the schema refuses: parse and validation errors, depth/cost/alias/token limits, bad variables.
    const message = production ? graphqlError.message.replace(/ ?Did you mean .*\?$/, "") : graphqlError.message;
    const pointer = variablePointer(graphqlError.message);
    return pointer
      ? { ...base, message, extensions: { code: "BAD_USER_INPUT", fields: [{ pointer, message }] } }
      : { ...base, message, extensions: { code: "BAD_USER_INPUT" } };
  });
}
