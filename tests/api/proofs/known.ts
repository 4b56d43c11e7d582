/**
 * Malformed-input cases the service still gets wrong, by operation, each with the reason; the input
 * proof fails when one is fixed (so it is taken off) or a new one appears.
 */

/**
 * A DateTime variable its scalar refuses never reaches a resolver: graphql-js refuses the variable and
 * the error formatter (server/graphql/errors.ts, another helper's area) answers BAD_USER_INPUT without
 * `fields`, though the message names the variable ('Variable "$from" got invalid value …').
 */
const dateTimeVariable = (names: string[]) =>
  names.flatMap((name) => [
    `/${name}: NUL: named [], not /${name}`,
    `/${name}: a control character: named [], not /${name}`,
  ]);

export const KNOWN_INPUT_FAILURES: Record<string, string[]> = {
  errorLogs: dateTimeVariable(["from", "to"]),
  streamMetrics: dateTimeVariable(["startDate", "endDate"]),
  webhookMetrics: dateTimeVariable(["startDate", "endDate"]),
};
