export type ErrorCode =
  | "BAD_USER_INPUT"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "RATE_LIMITED"
  | "UPSTREAM_FAILED"
  | "INTERNAL";

export interface FieldError {
  /** JSON pointer of the bad field, relative to the input object (or naming the argument). */
  pointer: string;
  message: string;
}

/**
 * An error the API shows to the user as it is, with a stable code. It carries no stack: it is an answer
 * (bad input, not found, refused), not a fault, and capturing the frames was ~12 µs of every refusal, a
 * fifth of a refused REST call's time in a CPU profile.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fields: FieldError[];

  constructor(code: ErrorCode, message: string, fields: FieldError[] = []) {
    const frames = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = frames;
    this.code = code;
    this.fields = fields;
    this.name = "AppError";
  }
}

export const badInput = (fields: FieldError[], message = "The input is not valid.") =>
  new AppError("BAD_USER_INPUT", message, fields);
export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} was not found.`);

/** The one owned-or-not-found check: a row a store found for the account, or NOT_FOUND naming `what`. */
export function foundOr<T>(row: T | undefined | null, what: string): T {
  if (row === undefined || row === null) throw notFound(what);
  return row;
}
export const forbidden = (message = "Your role does not allow this.") => new AppError("FORBIDDEN", message);
export const unauthenticated = () => new AppError("UNAUTHENTICATED", "Sign in first.");
export const conflict = (message: string) => new AppError("CONFLICT", message);
