import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { decodePercent } from "../../platform/text.ts";
import { attachFastLane } from "./fastlane.ts";
import { DataPlane, type DataPlaneDeps, type RouteTarget } from "./plane.ts";

const EMPTY = Buffer.alloc(0);
const RPC_PATH = /^\/rpc\/([^/?#]+)(?:\/([^/?#]+))?\/?(?:[?#]|$)/;

/**
 * The endpoint a raw request names: /rpc/:exId[/:token], or a domain-mask host with an optional /:token
 * path. A segment whose percent-encoding is malformed is taken as it is, and names no endpoint or token.
 */
export function targetOf(plane: DataPlane, req: { url?: string; headers: { host?: string } }): RouteTarget | undefined {
  const url = req.url ?? "/";
  const host = req.headers.host;
  if (host && plane.lookup({ host })) {
    const token = url.split(/[?#]/)[0].split("/").filter(Boolean)[0];
    return { host, pathToken: token ? decodePercent(token) : undefined };
  }
  if (!url.startsWith("/rpc/")) return undefined;
  const m = RPC_PATH.exec(url);
  if (!m) return undefined;
  return { exId: decodePercent(m[1]), pathToken: m[2] ? decodePercent(m[2]) : undefined };
}

/**
 * RPC traffic skips Fastify's router and hooks: the server's request listener (Fastify's) is wrapped so
 * that /rpc/* and domain-mask requests go straight to the plane. That is most of the proxy's latency budget
 * (the benchmark's target is under 0.15 ms added). The Fastify routes below stay for `app.inject` and for
 * WebSocket upgrades routed by @fastify/websocket.
 */
function takeRpcRequestsFirst(app: FastifyInstance, plane: DataPlane): void {
  const listeners = app.server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (listeners.length !== 1) return;
  const fastifyHandler = listeners[0];
  app.server.removeListener("request", fastifyHandler);
  app.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const target = targetOf(plane, req);
    if (target) void plane.handleHttp(req, res, target);
    else fastifyHandler(req, res);
  });
}

/**
 * Mounts the RPC proxy on a Fastify app: HTTP and WebSocket at /rpc/:exId and /rpc/:exId/:token, and any
 * path on a host that is an enabled domain mask. Call it once from buildApp, after @fastify/websocket is
 * registered if the app uses it (without it, the data plane listens for upgrades on the server itself).
 * Returns the plane; `app.close()` closes it (hooks are added here).
 */
export function registerDataPlane(app: FastifyInstance, deps: DataPlaneDeps): DataPlane {
  const plane = new DataPlane(deps);
  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer, target: RouteTarget) => {
    plane.handleUpgrade(req, socket, head, target).catch(() => socket.destroy());
  };

  // Domain masks: any path on a masked host belongs to the endpoint, ahead of the console's own routes.
  app.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const host = request.headers.host;
    if (!host || !plane.lookup({ host })) return done();
    const target = targetOf(plane, request.raw);
    if (!target) return done();
    reply.hijack();
    if (request.headers.upgrade) handleUpgrade(request.raw, request.raw.socket, EMPTY, target);
    else void plane.handleHttp(request.raw, reply.raw, target);
  });

  takeRpcRequestsFirst(app, plane);
  const lane = attachFastLane(app.server, {
    plane,
    keepAliveMs: app.server.keepAliveTimeout || 72_000,
    requestTimeoutMs: app.server.requestTimeout || 300_000,
    targetOf: (req) => targetOf(plane, req),
  });

  app.register(async (scope) => {
    // The proxy reads and forwards the raw body itself: leave the stream unread.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
    const routeTarget = (request: FastifyRequest): RouteTarget => {
      const params = request.params as { exId: string; token?: string };
      return { exId: params.exId, pathToken: params.token };
    };
    const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      // WebSocket upgrades are taken here, before @fastify/websocket would close them on a non-websocket route.
      if (!request.headers.upgrade) return done();
      reply.hijack();
      handleUpgrade(request.raw, request.raw.socket, EMPTY, routeTarget(request));
    };
    const handler = (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return plane.handleHttp(request.raw, reply.raw, routeTarget(request));
    };
    for (const url of ["/rpc/:exId", "/rpc/:exId/:token"]) {
      scope.route({ method: ["GET", "POST", "OPTIONS"], url, onRequest, handler });
    }
  });

  app.addHook("onReady", (done) => {
    if (!app.hasDecorator("websocketServer")) {
      app.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        const target = targetOf(plane, req);
        if (target) handleUpgrade(req, socket, head, target);
        // Other upgrade listeners (if any) own the rest; alone, an unknown upgrade is closed.
        else if (app.server.listenerCount("upgrade") === 1) socket.destroy();
      });
    }
    done();
  });
  // WebSocket connections are not the server's to close: end them before it waits for its connections.
  app.addHook("preClose", async () => {
    plane.closeConnections();
    lane.closeConnections();
  });
  app.addHook("onClose", async () => plane.close());
  return plane;
}
