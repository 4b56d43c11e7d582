// The GraphQL transport: one JSON POST to /graphql on the same origin (the session travels in an HttpOnly
// cookie), its errors, and the answers the page's first-page script asked for before this code ran.
// No React here: the build's first-page script (vite.config.ts) reads how a request is made from it.

export interface FieldError {
  pointer: string;
  message: string;
}

/** A GraphQL error with its stable `extensions.code` and, for BAD_USER_INPUT, the bad fields. */
export class GqlError extends Error {
  readonly code: string;
  readonly fields: FieldError[];
  constructor(message: string, code = "INTERNAL", fields: FieldError[] = []) {
    super(message);
    this.name = "GqlError";
    this.code = code;
    this.fields = fields;
  }
}

/** Runs one GraphQL document; resolves with `data` or rejects with a GqlError. */
export type Transport = (document: string, variables?: Record<string, unknown>) => Promise<Record<string, unknown>>;

interface RawError {
  message?: string;
  extensions?: { code?: string; fields?: FieldError[] };
}

export function toGqlError(errors: RawError[] | undefined, fallback: string): GqlError {
  const first = errors?.[0];
  const fields = (errors ?? []).flatMap((error) => error.extensions?.fields ?? []);
  return new GqlError(first?.message ?? fallback, first?.extensions?.code ?? "INTERNAL", fields);
}

export const REGISTRY_DOCUMENT = "query Registry { registry { version screens schemas operations locked catalogue } }";

/** How a document is sent: the one request shape, which the first-page script copies. */
export function graphqlRequest(document: string, variables?: Record<string, unknown>) {
  return {
    method: "POST",
    credentials: "include",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: document, variables }),
  } satisfies RequestInit;
}

/**
 * Where the first-page script leaves the answers it asked for (by document; asked without variables):
 * a global, because that script runs before, and apart from, the console's modules.
 */
export const FIRST_ANSWERS = "__nodeplaneFirstAnswers";

/** The answer to `document` the first-page script asked for, once: a later call asks again. */
function takeFirstAnswer(document: string): Promise<Response> | undefined {
  const started = (globalThis as { [FIRST_ANSWERS]?: Record<string, Promise<Response>> })[FIRST_ANSWERS];
  const answer = started?.[document];
  if (answer) delete started[document];
  return answer;
}

/**
 * The production transport. `url` may be relative; it is resolved against the page's origin. A plain
 * fetch: a GraphQL client library would bring the graphql parser into every screen's download.
 */
export function createHttpTransport(url = "/graphql"): Transport {
  const absolute = typeof window === "undefined" ? url : new URL(url, window.location.origin).href;
  return async (document, variables) => {
    let response: Response;
    try {
      response = await ((variables === undefined ? takeFirstAnswer(document) : undefined) ??
        fetch(absolute, graphqlRequest(document, variables)));
    } catch {
      throw new GqlError("Cannot reach the service. Check your connection and try again.", "UNREACHABLE");
    }
    const body = (await response.json().catch(() => null)) as { data?: unknown; errors?: RawError[] } | null;
    if (body?.errors?.length) throw toGqlError(body.errors, `The service answered ${response.status}.`);
    if (!response.ok || !body || typeof body.data !== "object" || body.data === null) {
      const status = response.status;
      throw new GqlError(
        status === 429 ? "Too many requests. Try again shortly." : `The service answered ${status}.`,
        status === 429 ? "RATE_LIMITED" : "INTERNAL",
      );
    }
    return body.data as Record<string, unknown>;
  };
}
