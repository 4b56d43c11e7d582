import http from "node:http";
import type net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostClient } from "../../../server/dataplane/http/post-client.ts";
import { INSPECT_PATH } from "../../../server/domains/inspector/service.ts";
import { EgressPolicy, EgressRefused } from "../../../server/platform/egress.ts";
import { resolverOf } from "../../support/egress.ts";

/**
 * The one route of this service the egress policy lets a tenant's delivery reach on loopback (the
 * request inspector): only its path, only on the origins the service makes its links with, whatever a
 * name resolves to; a real server on loopback stands for the service.
 */
const TOKEN = "0123456789abcdef0123456789abcdef";
let server: http.Server;
let port = 0;
const seen: { url: string; host: string }[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    seen.push({ url: request.url ?? "", host: String(request.headers.host) });
    request.resume();
    request.on("end", () => response.end("{}"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function policy() {
  const egress = new EgressPolicy({
    ownPorts: [port],
    resolve: resolverOf({ "rebound.example": ["127.0.0.1"] }),
  });
  egress.allowOwnRoute({ origins: [`http://127.0.0.1:${port}`, `http://localhost:${port}`], path: INSPECT_PATH });
  return egress;
}

describe("the service's own route", () => {
  it("is the inspector's path on an own origin, with no query, credentials or fragment", () => {
    const egress = policy();
    const base = `http://127.0.0.1:${port}`;
    expect(egress.isOwnRoute(`${base}/inspect/${TOKEN}`)).toBe(true);
    expect(egress.isOwnRoute(`http://LOCALHOST:${port}/inspect/${TOKEN}`)).toBe(true);
    for (const url of [
      `${base}/graphql`,
      `${base}/inspect/${TOKEN}/../../graphql`,
      `${base}/inspect/${TOKEN}%2F..%2F..%2Fgraphql`,
      `${base}/inspect/${TOKEN}?x=1`,
      `${base}/inspect/${TOKEN}#x`,
      `http://u:p@127.0.0.1:${port}/inspect/${TOKEN}`,
      `https://127.0.0.1:${port}/inspect/${TOKEN}`,
      `http://127.0.0.1:${port + 1}/inspect/${TOKEN}`,
      `http://[::1]:${port}/inspect/${TOKEN}`,
      `http://rebound.example:${port}/inspect/${TOKEN}`,
      `http://127.0.0.1:${port}/inspect/${TOKEN.toUpperCase()}`,
    ])
      expect(egress.isOwnRoute(url), url).toBe(false);
    expect(new EgressPolicy().isOwnRoute(`${base}/inspect/${TOKEN}`)).toBe(false);
  });

  it("a delivery reaches it, with the URL's path and host; any other loopback place is refused", async () => {
    const client = new PostClient({ egress: policy(), timeoutMs: 2000 });
    try {
      const answer = await client.post(`http://127.0.0.1:${port}/inspect/${TOKEN}`, "[]");
      expect(answer.status).toBe(200);
      expect(seen.at(-1)).toEqual({ url: `/inspect/${TOKEN}`, host: `127.0.0.1:${port}` });
      const before = seen.length;
      for (const url of [
        `http://127.0.0.1:${port}/graphql`,
        `http://rebound.example:${port}/inspect/${TOKEN}`,
        `http://127.0.0.1:${port}/inspect/${TOKEN}?then=/graphql`,
      ])
        await expect(client.post(url, "[]"), url).rejects.toBeInstanceOf(EgressRefused);
      expect(seen).toHaveLength(before);
    } finally {
      await client.close();
    }
  });
});
