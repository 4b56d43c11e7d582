// The response cache (server/graphql/response-cache.ts) keeps the answer to a read built only from
// snapshots (the endpoint lists) and serves it again while they hold. These tests read its counters to
// tell a kept answer from a fresh one, and check that what it serves is what the service would answer.
import { request } from "node:http";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { loadRegistry } from "../../server/registry/registry.ts";
import { type GqlClient, signIn, signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();
const DEMO_PASSWORD = "demo-password-for-tests";

const LIST = `query Endpoints($first: Int) {
  endpoints(first: $first) { edges { cursor node { id label network httpUrl tags { tagId label } createdAt } }
    pageInfo { endCursor hasNextPage } totalCount } }`;

type Listed = { endpoints: { edges: { node: { id: string; label: string | null } }[]; totalCount: number } };

const labels = (data: Listed) => data.endpoints.edges.map((edge) => edge.node.label);
const stats = () => {
  const answers = ctx.app.services.answers;
  if (!answers) throw new Error("the service serves no API");
  return { ...answers.stats };
};

async function create(client: GqlClient, label: string) {
  const data = await client.gqlOk<{ createEndpoint: { id: string } }>(
    "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
    { input: { chain: "ethereum", network: "ethereum-sepolia", label } },
  );
  return data.createEndpoint.id;
}

/** The list's answer as sent: status, headers and the body's bytes, asking for `encoding` (node's fetch would decode it). */
function rawList(client: GqlClient, encoding: string) {
  const body = JSON.stringify({ query: LIST, variables: { first: 10 } });
  const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    const sent = request(
      new URL("/graphql", client.baseUrl),
      {
        method: "POST",
        headers: { "content-type": "application/json", cookie, "accept-encoding": encoding },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

describe("the response cache", () => {
  it("serves a list's answer again until the account's endpoints change, then the new one", async () => {
    const user = await signUp(ctx.app);
    const id = await create(user.client, "first");
    await create(user.client, "second");

    const before = stats();
    const first = await user.client.gqlOk<Listed>(LIST, { first: 10 });
    expect(stats().kept).toBe(before.kept + 1);
    const again = await user.client.gqlOk<Listed>(LIST, { first: 10 });
    expect(stats().hits).toBe(before.hits + 1);
    expect(again).toEqual(first);

    // Other variables are another answer.
    const one = await user.client.gqlOk<Listed>(LIST, { first: 1 });
    expect(one.endpoints.edges).toHaveLength(1);
    expect(stats().hits).toBe(before.hits + 1);

    await user.client.gqlOk(
      "mutation($id: ID!, $label: String!) { updateEndpointLabel(id: $id, label: $label) { id } }",
      {
        id,
        label: "renamed",
      },
    );
    const changed = await user.client.gqlOk<Listed>(LIST, { first: 10 });
    expect(labels(changed).sort()).toEqual(["renamed", "second"]);
    expect(stats().hits).toBe(before.hits + 1);

    await user.client.gqlOk("mutation($id: ID!) { archiveEndpoint(id: $id) { id } }", { id });
    expect(labels(await user.client.gqlOk<Listed>(LIST, { first: 10 }))).toEqual(["second"]);
  });

  it("sends a kept answer's bytes as first sent, compressed as each client accepts, until the list changes", async () => {
    const user = await signUp(ctx.app);
    // Labels beyond ASCII (the kept bytes are UTF-8) and long enough for an answer that is compressed (1 kB).
    const id = await create(user.client, `café · 東京 · 🚀 ${"ü".repeat(48)}`);
    await create(user.client, `naïve — ${"é".repeat(56)}`);

    const before = stats();
    const plain = await rawList(user.client, "identity");
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.byteLength).toBeGreaterThan(1024);
    const fresh = JSON.parse(plain.body.toString("utf8")) as { data: Listed };
    expect(labels(fresh.data).sort()).toEqual([`café · 東京 · 🚀 ${"ü".repeat(48)}`, `naïve — ${"é".repeat(56)}`]);
    expect(stats().kept).toBe(before.kept + 1);

    // Served again: the same bytes as they are, and compressed (twice each: the first send compresses, the
    // second may send the copy kept).
    const again = await rawList(user.client, "identity");
    expect(again.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(again.headers["content-length"]).toBe(String(plain.body.byteLength));
    expect(again.body.equals(plain.body)).toBe(true);
    for (const [encoding, decode] of [
      ["br", brotliDecompressSync],
      ["gzip", gunzipSync],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const compressed = await rawList(user.client, encoding);
        expect(compressed.headers["content-encoding"]).toBe(encoding);
        expect(compressed.headers.vary).toBe("accept-encoding");
        expect(decode(compressed.body).equals(plain.body)).toBe(true);
      }
    }
    expect(stats()).toEqual({ hits: before.hits + 5, kept: before.kept + 1 });

    // A change: the compressed answers are the new list's too.
    await user.client.gqlOk(
      "mutation($id: ID!, $label: String!) { updateEndpointLabel(id: $id, label: $label) { id } }",
      { id, label: `renamed ${"ö".repeat(56)}` },
    );
    for (const [encoding, decode] of [
      ["br", brotliDecompressSync],
      ["gzip", gunzipSync],
    ] as const) {
      const changed = JSON.parse(decode((await rawList(user.client, encoding)).body).toString("utf8")) as {
        data: Listed;
      };
      expect(labels(changed.data)).toContain(`renamed ${"ö".repeat(56)}`);
    }
    expect(stats()).toEqual({ hits: before.hits + 6, kept: before.kept + 2 });
  });

  it("keeps the answer to the endpoints list screen's own operation", async () => {
    const registry = loadRegistry(path.resolve(import.meta.dirname, "../.."), loadApiSchema());
    const view = registry.screens
      .find((s) => s.manifest.id === "endpoints.list")
      ?.manifest.views.find((v) => v.kind === "list");
    const operation = typeof view?.query === "string" ? registry.operations.get(view.query) : undefined;
    if (!operation) throw new Error("the endpoints list screen has no operation");
    const user = await signUp(ctx.app);
    await create(user.client, "listed");
    const before = stats();
    const first = await user.client.gqlOk<Listed>(operation.text, { first: 20 });
    expect(await user.client.gqlOk<Listed>(operation.text, { first: 20 })).toEqual(first);
    expect(labels(first)).toEqual(["listed"]);
    expect(stats()).toEqual({ hits: before.hits + 1, kept: before.kept + 1 });
  });

  it("keeps nothing for an operation with a field that is not read from a snapshot, or for a mutation", async () => {
    const user = await signUp(ctx.app);
    await create(user.client, "mixed");
    const before = stats();
    const mixed = "{ endpoints(first: 5) { totalCount } viewer { email } }";
    await user.client.gqlOk(mixed);
    await user.client.gqlOk(mixed);
    const tags = "{ tags { id label } }";
    await user.client.gqlOk(tags);
    await user.client.gqlOk(tags);
    await create(user.client, "another");
    expect(stats()).toEqual(before);
  });

  it("keeps no answer with errors, and serves nothing to a caller without a session", async () => {
    const user = await signUp(ctx.app);
    await create(user.client, "mine");
    const before = stats();
    const badCursor = await user.client.gql('{ endpoints(first: 5, after: "not a cursor") { totalCount } }');
    expect(badCursor.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    await user.client.gql('{ endpoints(first: 5, after: "not a cursor") { totalCount } }');
    expect(stats()).toEqual(before);

    await user.client.gqlOk(LIST, { first: 10 });
    const anonymous = await ctx.app.client().gql(LIST, { first: 10 });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(stats().hits).toBe(before.hits);
  });

  it("never serves one member's or account's answer to another", async () => {
    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    const stranger = await signUp(ctx.app);
    await create(stranger.client, "the stranger's");

    const before = stats();
    const owners = await owner.client.gqlOk<Listed>(LIST, { first: 10 });
    const viewers = await viewer.client.gqlOk<Listed>(LIST, { first: 10 });
    const strangers = await stranger.client.gqlOk<Listed>(LIST, { first: 10 });
    // Same account, same endpoints; but each member's answer is their own.
    expect(viewers).toEqual(owners);
    expect(stats()).toEqual({ hits: before.hits, kept: before.kept + 3 });
    expect(labels(strangers)).toEqual(["the stranger's"]);
    expect(labels(owners)).not.toContain("the stranger's");

    // After signing out, the same client is refused, not served what it was answered before.
    await owner.client.gqlOk("mutation { signOut }");
    const signedOut = await owner.client.gql(LIST, { first: 10 });
    expect(signedOut.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  });
});
