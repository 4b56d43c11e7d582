import { createHash } from "node:crypto";
import type { FastifyError, FastifyInstance } from "fastify";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import { MAX_PART_BYTES } from "./limits.ts";
import type { LocalPartStorage } from "./part-storage.ts";
import { getUploadById } from "./store.ts";

/**
 * `PUT /kv-uploads/:uploadId/parts/:partNumber?expires&signature`: where the console PUTs the parts of
 * an upload kept by this service. The signature (from kvUploadPartUrl) is the authorisation, as with an
 * S3 presigned URL; the body is the part's bytes, whatever its content type. Answers with the part's
 * ETag (its MD5), as S3 does.
 */
export async function kvPartRoutes(app: FastifyInstance, deps: { db: Db; storage: LocalPartStorage }) {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_PART_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    // A part over its size is refused before it is read, in the words and shape of the route's other answers.
    scope.setErrorHandler((error: FastifyError, _request, reply) => {
      if (error.code !== "FST_ERR_CTP_BODY_TOO_LARGE") throw error;
      return reply
        .code(413)
        .send({ error: `A part is at most ${MAX_PART_BYTES / 1024 / 1024} MiB.`, code: "BAD_USER_INPUT" });
    });
    scope.put<{
      Params: { uploadId: string; partNumber: string };
      Querystring: { expires?: string; signature?: string };
    }>("/kv-uploads/:uploadId/parts/:partNumber", async (request, reply) => {
      const { uploadId } = request.params;
      const partNumber = Number(request.params.partNumber);
      const expires = Number(request.query.expires);
      const signature = String(request.query.signature ?? "");
      if (!Number.isInteger(partNumber) || !deps.storage.verify(uploadId, partNumber, expires, signature))
        return reply.code(403).send({ error: "This part URL is not valid or has expired.", code: "FORBIDDEN" });
      const upload = await getUploadById(deps.db, uploadId);
      if (!upload || upload.expiresAt.getTime() < Date.now())
        return reply.code(404).send({ error: "The upload was not found.", code: "NOT_FOUND" });
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      try {
        await deps.storage.writePart(uploadId, partNumber, body);
      } catch (error) {
        if ((error as { code?: string }).code === "ENOENT")
          return reply.code(404).send({ error: "The upload was not found.", code: "NOT_FOUND" });
        // The upload would pass its size with this part.
        if (error instanceof AppError) return reply.code(413).send({ error: error.message, code: error.code });
        throw error;
      }
      const etag = `"${createHash("md5").update(body).digest("hex")}"`;
      return reply.header("etag", etag).send({ partNumber, size: body.length });
    });
  });
}
