import { createHash } from "node:crypto";
import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import { MAX_PART_BYTES, MAX_RECEIVING_PART_BYTES } from "./limits.ts";
import type { LocalPartStorage } from "./part-storage.ts";
import { getUploadById } from "./store.ts";

interface PartRoute {
  Params: { uploadId: string; partNumber: string };
  Querystring: { expires?: string; signature?: string };
}

const MIB = 1024 * 1024;

/** The bytes a PUT says it brings; one without a usable Content-Length (chunked) may bring a whole part. */
function announcedBytes(request: FastifyRequest): number {
  const length = Number(request.headers["content-length"]);
  return Number.isSafeInteger(length) && length >= 0 ? Math.min(length, MAX_PART_BYTES) : MAX_PART_BYTES;
}

/**
 * `PUT /kv-uploads/:uploadId/parts/:partNumber?expires&signature`: where the console PUTs the parts of
 * an upload kept by this service. The signature (from kvUploadPartUrl) is the authorisation, as with an
 * S3 presigned URL; the body is the part's bytes, whatever its content type. Answers with the part's
 * ETag (its MD5), as S3 does.
 *
 * A body is held in memory until it is whole, so everything that can refuse a PUT is checked before it
 * is read (onRequest): the signature, the upload, and the account's bytes of parts on their way at once
 * (MAX_RECEIVING_PART_BYTES, given back when the PUT's connection ends, however it ends).
 */
export async function kvPartRoutes(app: FastifyInstance, deps: { db: Db; storage: LocalPartStorage }) {
  /** Per account, the bytes of the parts being received by this process. */
  const receiving = new Map<string, number>();
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_PART_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    // A part over its size is refused before it is read, in the words and shape of the route's other answers.
    scope.setErrorHandler((error: FastifyError, _request, reply) => {
      if (error.code !== "FST_ERR_CTP_BODY_TOO_LARGE") throw error;
      return reply.code(413).send({ error: `A part is at most ${MAX_PART_BYTES / MIB} MiB.`, code: "BAD_USER_INPUT" });
    });
    scope.put<PartRoute>(
      "/kv-uploads/:uploadId/parts/:partNumber",
      {
        onRequest: async (request, reply) => {
          const { uploadId } = request.params;
          const partNumber = Number(request.params.partNumber);
          const expires = Number(request.query.expires);
          const signature = String(request.query.signature ?? "");
          if (!Number.isInteger(partNumber) || !deps.storage.verify(uploadId, partNumber, expires, signature))
            return reply.code(403).send({ error: "This part URL is not valid or has expired.", code: "FORBIDDEN" });
          const upload = await getUploadById(deps.db, uploadId);
          if (!upload || upload.expiresAt.getTime() < Date.now())
            return reply.code(404).send({ error: "The upload was not found.", code: "NOT_FOUND" });
          const bytes = announcedBytes(request);
          const sending = receiving.get(upload.accountId) ?? 0;
          if (sending + bytes > MAX_RECEIVING_PART_BYTES) {
            const already = (sending / MIB).toLocaleString("en-US", { maximumFractionDigits: 1 });
            return reply.code(429).send({
              error: `This account is already sending ${already} MiB of upload parts and may send at most ${MAX_RECEIVING_PART_BYTES / MIB} MiB at once: send the parts one after another.`,
              code: "RATE_LIMITED",
            });
          }
          receiving.set(upload.accountId, sending + bytes);
          reply.raw.once("close", () => {
            const left = (receiving.get(upload.accountId) ?? bytes) - bytes;
            if (left > 0) receiving.set(upload.accountId, left);
            else receiving.delete(upload.accountId);
          });
        },
      },
      async (request, reply) => {
        const { uploadId } = request.params;
        const partNumber = Number(request.params.partNumber);
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
      },
    );
  });
}
