import { describe, expect, it } from "vitest";
import { type GqlClient, signIn, signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();
const DEMO_PASSWORD = "demo-password-for-tests";

const endpointFields = `id name exId label chain network canonicalNetwork status wssUrl httpUrl chainCompatibility docsExName
  isDedicated isSelectChain isRollup tokenAuth tags { tagId label } quickstart { apps { name url } dapps { name } wallets { name } }
  installedAddons { id } createdAt initialToken`;

interface Endpoint {
  id: string;
  label: string | null;
  status: string;
  httpUrl: string;
  wssUrl: string;
  tags: { tagId: string; label: string }[];
  [field: string]: unknown;
}

async function create(client: GqlClient, input: Record<string, unknown>) {
  return client.gql<{ createEndpoint: Endpoint }>(
    `mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { ${endpointFields} } }`,
    { input },
  );
}

async function list(client: GqlClient, variables: Record<string, unknown> = {}) {
  const data = await client.gqlOk<{
    endpoints: {
      edges: { cursor: string; node: Endpoint }[];
      pageInfo: { endCursor: string | null; hasNextPage: boolean };
      totalCount: number;
    };
  }>(
    `query($first: Int, $after: String, $search: String, $tagIds: [ID!], $status: EndpointStatus, $orderBy: EndpointOrder) {
      endpoints(first: $first, after: $after, search: $search, tagIds: $tagIds, status: $status, orderBy: $orderBy) {
        edges { cursor node { id label status tags { tagId label } } } pageInfo { endCursor hasNextPage } totalCount } }`,
    variables,
  );
  return data.endpoints;
}

describe("endpoints", () => {
  it("creates an endpoint with every field, its URLs pointing at this service", async () => {
    const user = await signUp(ctx.app);
    const { data, errors } = await create(user.client, {
      chain: "ethereum",
      network: "ethereum-sepolia",
      label: "My app",
    });
    expect(errors).toBeUndefined();
    const endpoint = data?.createEndpoint as Endpoint;
    expect(endpoint).toMatchObject({
      label: "My app",
      chain: "ethereum",
      network: "ethereum-sepolia",
      canonicalNetwork: "ethereum-sepolia",
      status: "ACTIVE",
      chainCompatibility: "evm",
      isDedicated: false,
      tags: [],
      installedAddons: [],
    });
    expect(endpoint.httpUrl).toBe(`${ctx.app.url}/rpc/${endpoint.exId}`);
    expect(endpoint.wssUrl).toBe(`${ctx.app.url.replace("http", "ws")}/rpc/${endpoint.exId}`);
    expect(endpoint.name).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect((endpoint.quickstart as { apps: unknown[] }).apps.length).toBeGreaterThan(0);
    // Token authentication is on from the start; the first token is shown in this answer only.
    expect(endpoint.tokenAuth).toBe(true);
    expect(endpoint.initialToken).toMatch(/^[0-9a-f]{64}$/);
    const again = await user.client.gqlOk<{ endpoint: Endpoint }>(
      `query($id: ID!) { endpoint(id: $id) { ${endpointFields} } }`,
      { id: endpoint.id },
    );
    expect(again.endpoint).toEqual({ ...endpoint, initialToken: null });
  });

  it("refuses bad input, unknown or unavailable networks, and the plan's limit, writing nothing", async () => {
    const user = await signUp(ctx.app);
    const cases: [Record<string, unknown>, string][] = [
      [{ chain: "ethereum", network: "polygon-mainnet" }, "/network"],
      [{ chain: "ethereum", network: "ethereum-nowhere" }, "/network"],
      [{ chain: "xrp", network: "xrp-testnet" }, "/network"],
      [{ chain: "fantom", network: "fantom-mainnet" }, "/network"],
      [{ chain: "ethereum", network: "ethereum-sepolia", label: "x".repeat(65) }, "/label"],
      [{ chain: "", network: "ethereum-sepolia" }, "/chain"],
    ];
    for (const [input, pointer] of cases) {
      const { errors } = await create(user.client, input);
      expect(errors?.[0].extensions, JSON.stringify(input)).toMatchObject({
        code: "BAD_USER_INPUT",
        fields: [{ pointer }],
      });
    }
    expect((await list(user.client)).totalCount).toBe(0);
    // The free plan allows two endpoints.
    for (let i = 0; i < 2; i++)
      expect((await create(user.client, { chain: "base", network: "base-sepolia" })).errors).toBeUndefined();
    const { errors } = await create(user.client, { chain: "base", network: "base-sepolia" });
    expect(errors?.[0].extensions?.code).toBe("CONFLICT");
    expect(errors?.[0].message).toMatch(/allows 2 endpoints/);
    expect((await list(user.client)).totalCount).toBe(2);
  });

  it("pages with cursors, searches, sorts and filters by tag and status", async () => {
    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const labels = ["alpha node", "beta node", "gamma node", "delta node", "epsilon node"];
    const created: Endpoint[] = [];
    for (const label of labels) {
      const { data } = await create(owner.client, { chain: "ethereum", network: "ethereum-holesky", label });
      created.push(data?.createEndpoint as Endpoint);
    }
    const all = await list(owner.client, { first: 100 });
    expect(all.totalCount).toBe(7);

    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await list(owner.client, { first: 2, after, orderBy: "LABEL_ASC" });
      expect(page.totalCount).toBe(7);
      seen.push(...page.edges.map((e) => e.node.label ?? ""));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual([...seen].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(new Set(seen).size).toBe(7);

    const newest = await list(owner.client, { first: 3 });
    expect(newest.edges.map((e) => e.node.label)).toEqual(["epsilon node", "delta node", "gamma node"]);
    const next = await list(owner.client, { first: 3, after: newest.pageInfo.endCursor });
    expect(next.edges.map((e) => e.node.label)).toEqual(["beta node", "alpha node", "Indexer"]);

    expect((await list(owner.client, { search: "ELTA" })).edges.map((e) => e.node.label)).toEqual(["delta node"]);
    expect((await list(owner.client, { search: "100%_" })).totalCount).toBe(0);

    const tagged = await owner.client.gqlOk<{ addEndpointTag: Endpoint }>(
      'mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "Blue") { id tags { tagId label } } }',
      { id: created[1].id },
    );
    const blue = tagged.addEndpointTag.tags.find((t) => t.label === "Blue");
    expect(blue).toBeDefined();
    // The same label in another case is the same tag.
    const again = await owner.client.gqlOk<{ addEndpointTag: Endpoint }>(
      'mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "blue") { tags { tagId label } } }',
      { id: created[2].id },
    );
    expect(again.addEndpointTag.tags.map((t) => t.tagId)).toEqual([blue?.tagId]);
    const byTag = await list(owner.client, { tagIds: [blue?.tagId] });
    expect(byTag.edges.map((e) => e.node.label).sort()).toEqual(["beta node", "gamma node"]);

    await owner.client.gqlOk("mutation($id: ID!, $t: ID!) { removeEndpointTag(endpointId: $id, tagId: $t) { id } }", {
      id: created[2].id,
      t: blue?.tagId,
    });
    expect((await list(owner.client, { tagIds: [blue?.tagId] })).edges.map((e) => e.node.label)).toEqual(["beta node"]);

    const { errors } = await owner.client.gql("{ endpoints(first: 0) { totalCount } }");
    expect(errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const bad = await owner.client.gql('{ endpoints(after: "garbage") { totalCount } }');
    expect(bad.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/after" }] });
  });

  it("relabels, pauses, resumes and archives, refusing changes to an archived endpoint", async () => {
    const user = await signUp(ctx.app);
    const { data } = await create(user.client, { chain: "ethereum", network: "ethereum-sepolia", label: "Before" });
    const id = data?.createEndpoint.id;
    const run = <T>(query: string) => user.client.gql<T>(query, { id });

    expect(
      (
        await run<{ updateEndpointLabel: Endpoint }>(
          'mutation($id: ID!) { updateEndpointLabel(id: $id, label: "After") { label } }',
        )
      ).data?.updateEndpointLabel.label,
    ).toBe("After");
    const empty = await run('mutation($id: ID!) { updateEndpointLabel(id: $id, label: "") { label } }');
    expect(empty.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/label" }] });

    expect(
      (await run<{ toggleEndpointPaused: Endpoint }>("mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }"))
        .data?.toggleEndpointPaused.status,
    ).toBe("PAUSED");
    expect(
      (await run<{ toggleEndpointPaused: Endpoint }>("mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }"))
        .data?.toggleEndpointPaused.status,
    ).toBe("ACTIVE");
    expect(
      (await run<{ archiveEndpoint: Endpoint }>("mutation($id: ID!) { archiveEndpoint(id: $id) { status } }")).data
        ?.archiveEndpoint.status,
    ).toBe("ARCHIVED");

    expect((await list(user.client)).totalCount).toBe(0);
    expect((await list(user.client, { status: "ARCHIVED" })).edges.map((e) => e.node.id)).toEqual([id]);
    for (const query of [
      "mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }",
      "mutation($id: ID!) { archiveEndpoint(id: $id) { status } }",
      'mutation($id: ID!) { updateEndpointLabel(id: $id, label: "x") { status } }',
      'mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "x") { status } }',
    ]) {
      expect((await run(query)).errors?.[0].extensions?.code, query).toBe("CONFLICT");
    }
    // An archived endpoint no longer counts against the limit.
    for (let i = 0; i < 2; i++)
      expect((await create(user.client, { chain: "base", network: "base-sepolia" })).errors).toBeUndefined();
  });

  it("answers NOT_FOUND for another account's endpoints and tags, changing nothing", async () => {
    const owner = await signUp(ctx.app);
    const stranger = await signUp(ctx.app);
    const { data } = await create(owner.client, { chain: "ethereum", network: "ethereum-sepolia", label: "Mine" });
    const id = data?.createEndpoint.id as string;
    const tagged = await owner.client.gqlOk<{ addEndpointTag: Endpoint }>(
      'mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "secret") { tags { tagId } } }',
      { id },
    );
    const tagId = tagged.addEndpointTag.tags[0].tagId;
    const operations: [string, Record<string, unknown>][] = [
      ["query($id: ID!) { endpoint(id: $id) { id } }", { id }],
      ['mutation($id: ID!) { updateEndpointLabel(id: $id, label: "x") { id } }', { id }],
      ["mutation($id: ID!) { toggleEndpointPaused(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { archiveEndpoint(id: $id) { id } }", { id }],
      ['mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "x") { id } }', { id }],
      ["mutation($id: ID!, $t: ID!) { removeEndpointTag(endpointId: $id, tagId: $t) { id } }", { id, t: tagId }],
      ["mutation($t: ID!) { deleteTag(tagId: $t) { success } }", { t: tagId }],
    ];
    for (const [query, variables] of operations) {
      const { errors } = await stranger.client.gql(query, variables);
      expect(errors?.[0].extensions?.code, query).toBe("NOT_FOUND");
    }
    // The stranger's own endpoint cannot take the owner's tag either.
    const theirs = await create(stranger.client, { chain: "ethereum", network: "ethereum-sepolia" });
    const { errors } = await stranger.client.gql(
      "mutation($id: ID!, $t: ID!) { removeEndpointTag(endpointId: $id, tagId: $t) { id } }",
      {
        id: theirs.data?.createEndpoint.id,
        t: tagId,
      },
    );
    expect(errors?.[0].extensions?.code).toBe("NOT_FOUND");
    expect((await list(stranger.client, { tagIds: [tagId] })).totalCount).toBe(0);
    expect((await stranger.client.gqlOk<{ tags: unknown[] }>("{ tags { id } }")).tags).toEqual([]);

    const mine = await owner.client.gqlOk<{ endpoint: Endpoint }>(
      "query($id: ID!) { endpoint(id: $id) { label status tags { label } } }",
      { id },
    );
    expect(mine.endpoint).toEqual({ label: "Mine", status: "ACTIVE", tags: [{ label: "secret" }] });
  });

  it("lists each endpoint with its own tags, sorted by label", async () => {
    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const { edges } = await list(owner.client, { orderBy: "LABEL_ASC" });
    const tagsOf = (label: string) =>
      edges.find((e) => e.node.label === label)?.node.tags.map((t) => t.label) ?? "not listed";
    // The demo seed tags its two endpoints differently.
    expect(tagsOf("Wallet backend")).toEqual(["production", "wallet"]);
    expect(tagsOf("Indexer")).toEqual(["staging"]);
  });

  it("lists the networks catalogue with its flags", async () => {
    const user = await signUp(ctx.app);
    const { chains } = await user.client.gqlOk<{
      chains: {
        chain: string;
        networks: { value: string; needsUpgrade: boolean; comingSoon: boolean; chainId: number | null }[];
      }[];
    }>("{ chains { chain label networks { value label chainId needsUpgrade comingSoon beta disabled } } }");
    const networks = new Map(chains.flatMap((c) => c.networks.map((n) => [n.value, n] as const)));
    expect(networks.get("ethereum-sepolia")).toMatchObject({ chainId: 11155111, needsUpgrade: false });
    expect(networks.get("fantom-mainnet")?.needsUpgrade).toBe(true);
    expect(networks.get("xrp-testnet")?.comingSoon).toBe(true);
  });
});
