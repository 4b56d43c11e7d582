import { costLimitRule } from "@escape.tech/graphql-armor-cost-limit";
import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { maxDirectivesRule } from "@escape.tech/graphql-armor-max-directives";
import type { FastifyInstance } from "fastify";
import { type GraphQLSchema, NoSchemaIntrospectionCustomRule } from "graphql";
import mercurius from "mercurius";
import type { Logger } from "pino";
import { SESSION_COOKIE } from "../domains/account/service.ts";
import type { SessionCache } from "../domains/account/sessions.ts";
import { type AccessKeys, API_KEY_HEADER, KeyRefusal } from "../domains/tokens/keys.ts";
import { compressAnswer } from "../platform/answer-compression.ts";
import type { AppConfig } from "../platform/config.ts";
import type { Db } from "../platform/db/index.ts";
import type { Context } from "./context.ts";
import { formatError } from "./errors.ts";
import { bracketNesting } from "./nesting.ts";
import type { Resolvers } from "./resolvers.ts";
import { newReadRecord, type ResponseCache } from "./response-cache.ts";

export const GRAPHQL_PATH = "/graphql";

/** The HTTP status of a refused API key, as every API answers it. */
export const KEY_REFUSAL_STATUS = { UNAUTHENTICATED: 401, FORBIDDEN: 403, RATE_LIMITED: 429 } as const;

/** Limits on one GraphQL request: what a console screen needs, with room, and no more. */
export const graphqlLimits = {
  depth: 10,
  cost: 5000,
  aliases: 15,
  directives: 10,
  tokens: 2000,
  bodyBytes: 256 * 1024,
  /** Brackets nested in the text, checked before parsing (see bracketNesting). */
  nesting: 64,
};

/**
 * The GraphQL API, registered once over every domain's resolvers (see plugin.ts): the CSRF guard, the
 * response cache and compression hooks, hardening limits, error codes, and the context every resolver gets.
 */
export async function registerGraphqlApi(
  app: FastifyInstance,
  config: AppConfig,
  log: Logger,
  db: Db,
  services: { sessions: SessionCache; answers: ResponseCache; accessKeys: AccessKeys },
  resolvers: Resolvers,
  apiSchema: GraphQLSchema,
): Promise<void> {
  // CSRF: a cross-site form can post urlencoded or multipart bodies, never JSON without a preflight.
  // The route matched, not the URL's text: the router also takes percent-encoded spellings (/%67raphql).
  app.addHook("onRequest", (request, reply, done) => {
    if (request.routeOptions.url !== GRAPHQL_PATH) return done();
    if (request.method === "GET") {
      reply
        .code(405)
        .header("allow", "POST")
        .send({ errors: [{ message: "Use POST.", extensions: { code: "BAD_USER_INPUT" } }] });
      return;
    }
    if (!String(request.headers["content-type"] ?? "").startsWith("application/json")) {
      reply.code(415).send({
        errors: [{ message: "Send GraphQL requests as application/json.", extensions: { code: "BAD_USER_INPUT" } }],
      });
      return;
    }
    done();
  });

  // The one place a GraphQL request's caller is read: the response cache needs it before execution, the
  // context after. Callback-style hooks (here and below) cost no promise per request. A request with an
  // x-api-key is its key's (made for CONSOLE_REST), cookies unread: a bad key is refused, never replaced
  // by a session, and a page of another site cannot send the header without a CORS preflight we refuse.
  app.decorateRequest("caller", null);
  app.decorateRequest("reads", null);
  app.addHook("preHandler", (request, reply, done) => {
    if (request.routeOptions.url !== GRAPHQL_PATH) return done();
    const record = newReadRecord();
    request.reads = record;
    const key = request.headers[API_KEY_HEADER];
    const caller =
      key === undefined
        ? services.sessions.resolve(request.cookies[SESSION_COOKIE])
        : services.accessKeys.authenticate(key, "CONSOLE_REST", request.ip);
    caller.then(
      (principal) => {
        request.caller = principal;
        const stored = services.answers.lookup(request, principal, record);
        if (stored !== null) {
          reply.type("application/json; charset=utf-8").send(stored.body);
          return;
        }
        // Checked after the lookup: a kept answer's text passed when first answered (a scan of a screen's
        // text costs more than the rest of the lookup).
        const query = (request.body as { query?: unknown } | null)?.query;
        if (typeof query === "string" && bracketNesting(query, graphqlLimits.nesting) > graphqlLimits.nesting) {
          const message = `The query nests brackets more than ${graphqlLimits.nesting} levels deep.`;
          reply.code(400).send({ data: null, errors: [{ message, extensions: { code: "BAD_USER_INPUT" } }] });
          return;
        }
        done();
      },
      (error) => {
        if (!(error instanceof KeyRefusal)) return done(error);
        if (error.retryAfter !== undefined) reply.header("retry-after", String(error.retryAfter));
        const extensions = {
          code: error.code,
          ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }),
        };
        reply
          .code(KEY_REFUSAL_STATUS[error.code])
          .send({ data: null, errors: [{ message: error.message, extensions }] });
      },
    );
  });
  app.addHook("onSend", (request, reply, payload, done) => {
    if (request.reads?.keepAs) services.answers.keep(request.reads, reply.statusCode, payload);
    done(null, payload);
  });
  // After the response cache has kept the answer as text: the console's first answers (the registry above
  // all) reach a slow network compressed.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (request.routeOptions.url !== GRAPHQL_PATH) return done(null, payload);
    // Sent as bytes: a text is measured for its content-length, then encoded again by the socket.
    compressAnswer(request, reply, payload, request.reads?.served).then(
      (body) => done(null, typeof body === "string" ? Buffer.from(body) : body),
      done,
    );
  });

  await app.register(mercurius, {
    // The schema the registry was checked against: built once per start, and checked (mercurius validates
    // it when ready only if it was not). One graphql copy serves both: vitest aliases ours to Node's.
    schema: apiSchema,
    resolvers: resolvers as never,
    jit: 1,
    graphiql: false,
    path: GRAPHQL_PATH,
    // Errors thrown outside execution (the context builder, a refused body) go to requestErrorHandler.
    errorHandler: false,
    validationRules: [
      maxDepthRule({ n: graphqlLimits.depth }),
      costLimitRule({ maxCost: graphqlLimits.cost }),
      maxAliasesRule({ n: graphqlLimits.aliases }),
      maxDirectivesRule({ n: graphqlLimits.directives }),
      ...(config.production ? [NoSchemaIntrospectionCustomRule] : []),
    ],
    graphql: { parseOptions: { maxTokens: graphqlLimits.tokens } },
    context: (request, reply): Context => {
      if (!request.reads) throw new Error("the API's preHandler did not run for this request");
      return {
        db,
        config,
        log,
        principal: request.caller,
        request,
        reply,
        loaders: new Map(),
        reads: request.reads,
      };
    },
    errorFormatter: (execution, context) => {
      const requestId = context.reply.request.id;
      const errors = formatError({ errors: execution.errors }, { production: config.production, log, requestId });
      const queryRefused = !execution.data && errors.every((e) => e.extensions.code === "BAD_USER_INPUT" && !e.path);
      return { statusCode: queryRefused ? 400 : 200, response: { data: execution.data ?? null, errors } as never };
    },
  });
}
