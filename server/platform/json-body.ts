import type { FastifyInstance } from "fastify";

/**
 * A JSON body refused for a key that could reach Object.prototype when the body is merged into another
 * object. A caller's mistake (400) that every error handler answers with this message.
 */
export class PrototypeKeyRefused extends Error {
  readonly code = "NP_JSON_PROTOTYPE_KEY";
  readonly statusCode = 400;

  constructor() {
    super('The body is not accepted: JSON objects may not have a "__proto__" or "constructor.prototype" key.');
    this.name = "PrototypeKeyRefused";
  }
}

/**
 * JSON bodies parsed as Fastify parses them (secure-json-parse, refusing `__proto__` and
 * `constructor.prototype` keys, the prototype-pollution defence), saying why such a body is refused:
 * Fastify answers it "not valid JSON", as it does a syntax error. Only a refused body is read again,
 * with JSON.parse, to tell the two apart. Registered on the root instance before any route.
 */
export function parseJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? "error",
    app.initialConfig.onConstructorPoisoning ?? "error",
  );
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body: string, done) => {
    // The default parser is the callback kind (it calls done synchronously).
    (parse as (r: typeof request, b: string, d: typeof done) => void)(request, body, (error, value) => {
      if (error && isJson(body)) done(new PrototypeKeyRefused(), undefined);
      else done(error, value);
    });
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
