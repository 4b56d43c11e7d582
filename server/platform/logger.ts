import pino, { type DestinationStream, type LogFn, type Logger } from "pino";

/**
 * Field names whose values are never logged, at any depth: credentials, session and API tokens (and their
 * hashes), destination secrets, connection strings. Matched on the name, so a new field named like a
 * secret is covered without a list to keep.
 */
const SECRET_NAME =
  /passw|passphrase|mnemonic|secret|token|authorization|cookie|api_?key|access_?key|private_?key|connection_?string|credential|signature/i;

/**
 * Fields of errors that carry data values rather than describe the failure: Drizzle's `params` (a failed
 * statement's parameters: password hashes, token hashes, sealed secrets), pg's `detail` ("Failing row
 * contains (...)", "Key (email)=(...)"), `where` and `internalQuery`, and `parameters` of other drivers.
 * The statement text itself (`query`, with $1… placeholders) stays: it tells the operator what failed.
 */
const VALUE_FIELDS = new Set(["params", "parameters", "detail", "where", "internalQuery"]);

const REDACTED = "[redacted]";
const MAX_DEPTH = 8;

// Only real errors: what serializeError returns is a plain object and must not be taken for one again.
const isErrorLike = (value: unknown): value is Error => value instanceof Error;

/** Drizzle's DrizzleQueryError: its message is "Failed query: <sql>\nparams: <values>". */
const isFailedQuery = (error: Error): error is Error & { query: string; params: unknown } =>
  typeof (error as { query?: unknown }).query === "string" && "params" in error;

/** An error's message without the values it may quote, with its causes' messages appended. */
function safeMessage(error: Error, depth = 0): string {
  const own = isFailedQuery(error) ? `Failed query: ${error.query}` : error.message;
  const cause = (error as { cause?: unknown }).cause;
  return isErrorLike(cause) && depth < MAX_DEPTH ? `${own}: ${safeMessage(cause, depth + 1)}` : own;
}

/** The error as a plain object: its type, safe message, stack frames and descriptive fields, secrets removed. */
export function serializeError(error: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (!isErrorLike(error)) return error;
  if (seen.has(error) || depth > MAX_DEPTH) return "[error seen]";
  seen.add(error);
  const type = error.constructor?.name && error.constructor.name !== "Object" ? error.constructor.name : error.name;
  const message = safeMessage(error);
  // The stack's first lines repeat the raw message; only the frames are kept after the safe one.
  const stack = typeof error.stack === "string" ? error.stack : "";
  const frames = stack.indexOf("\n    at ");
  const out: Record<string, unknown> = {
    type,
    message,
    stack: `${type}: ${message}${frames >= 0 ? stack.slice(frames) : ""}`,
  };
  for (const [key, value] of Object.entries(error)) {
    if (key in out || key === "cause" || VALUE_FIELDS.has(key)) continue;
    out[key] = SECRET_NAME.test(key) ? REDACTED : scrub(value, depth + 1, seen);
  }
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined) out.cause = isErrorLike(cause) ? serializeError(cause, depth + 1, seen) : REDACTED;
  return out;
}

/** A logged value with secret-named fields redacted and errors serialized safely; other objects are left to pino. */
function scrub(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (isErrorLike(value)) return serializeError(value, depth, seen);
  if (depth > MAX_DEPTH || seen.has(value)) return value;
  if (Array.isArray(value)) {
    seen.add(value);
    return value.map((item) => scrub(item, depth + 1, seen));
  }
  const proto = Object.getPrototypeOf(value);
  // Requests, replies and other class instances have their own serializers (and redact paths).
  if (proto !== Object.prototype && proto !== null) return value;
  seen.add(value);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    out[key] = SECRET_NAME.test(key) ? REDACTED : scrub(item, depth + 1, seen);
  return out;
}

/** The service's logger; secrets are redacted wherever they could appear in a logged object. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      serializers: { err: (error: unknown) => serializeError(error) },
      formatters: { log: (object) => scrub(object, 0, new WeakSet()) as Record<string, unknown> },
      hooks: {
        // pino takes an error's raw message as the line's message when none is given: give the safe one.
        logMethod(args: Parameters<LogFn>, method: LogFn) {
          const [first, second] = args as unknown[];
          const error = isErrorLike(first) ? first : (first as { err?: unknown } | null)?.err;
          if (typeof second !== "string" && isErrorLike(error)) {
            return method.apply(this, [first as object, safeMessage(error)]);
          }
          return method.apply(this, args);
        },
      },
      redact: {
        paths: [
          "req.headers.cookie",
          "req.headers.authorization",
          "req.headers['x-token']",
          "req.headers['x-api-key']",
          "res.headers['set-cookie']",
        ],
        censor: REDACTED,
      },
    },
    destination,
  );
}
