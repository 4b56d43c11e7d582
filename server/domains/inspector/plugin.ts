import type { Logger } from "pino";
import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { Db } from "../../platform/db/index.ts";
import { HOUSEKEEPING_EVERY_MS, runEvery } from "../../platform/periodic.ts";
import { inspectorResolvers } from "./resolvers.ts";
import {
  type DestinationSigningSecrets,
  INSPECT_PREFIX,
  INSPECTOR_BOUNDS,
  pruneInspectedRequests,
  receiveRequest,
} from "./service.ts";

export interface InspectorDeps {
  db: Db;
  log: Logger;
  /** The security tokens of streams and webhooks pointed at an inspection URL (the streams domain's). */
  signingSecrets: DestinationSigningSecrets;
}

const TOKEN = /^[0-9a-f]{32}$/;

/**
 * The request inspector: the API, the address requests are received at (any method on
 * /inspect/<token>, any body up to INSPECTOR_BOUNDS.wireBytes, kept as received: this context reads
 * every body as bytes), and the housekeeping that drops requests past the kept time.
 */
export const inspectorPlugin: DomainPlugin<InspectorDeps> = async (app, { deps, api }) => {
  api.add(inspectorResolvers);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  app.route({
    method: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    url: `${INSPECT_PREFIX}:token`,
    bodyLimit: INSPECTOR_BOUNDS.wireBytes,
    handler: async (request, reply) => {
      const { token } = request.params as { token: string };
      const status = TOKEN.test(token)
        ? await receiveRequest(deps.db, deps.signingSecrets, token, {
            method: request.method,
            rawHeaders: request.raw.rawHeaders,
            body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          })
        : null;
      if (status === null) return reply.code(404).send({ error: "No inspection URL has this address." });
      return reply.code(status).send({ received: true });
    },
  });
  const housekeeping = runEvery(
    HOUSEKEEPING_EVERY_MS,
    () => pruneInspectedRequests(deps.db),
    (error) => deps.log.warn({ err: error }, "housekeeping of inspected requests failed"),
  );
  app.addHook("onClose", async () => housekeeping.stop());
};
