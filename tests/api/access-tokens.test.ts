// Access tokens (API keys): made once, shown once, stored hashed; a key acts on GraphQL with its role and
// only for its applications; every refusal of an unusable key reads the same; limits per client IP hold;
// another account neither sees nor revokes a key; and a revocation reaches a second service process.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GqlError, signUp, type TestUser, useTestApp } from "../support/api.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

const ctx = useTestApp();

const TOKEN_FIELDS = "id name prefix role applications isActive createdAt lastUsedAt revokedAt ipRateLimit { rps rpm }";

interface Token {
  id: string;
  name: string;
  prefix: string;
  role: string;
  applications: string[];
  isActive: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  ipRateLimit: { rps: number | null; rpm: number | null };
}

async function createKey(user: TestUser, input: { name?: string; role: string; applications: string[] }) {
  const { createAccessToken } = await user.client.gqlOk<{ createAccessToken: { accessToken: Token; key: string } }>(
    `mutation($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { key accessToken { ${TOKEN_FIELDS} } } }`,
    { input: { name: "ci", ...input } },
  );
  return createAccessToken;
}

async function tokens(user: TestUser, application?: string) {
  const { accessTokens } = await user.client.gqlOk<{ accessTokens: Token[] }>(
    `query($application: ApplicationType) { accessTokens(application: $application) { ${TOKEN_FIELDS} } }`,
    { application },
  );
  return accessTokens;
}

/** One GraphQL call to `base` with `key` in x-api-key and no cookie; its status, body and headers. */
async function withKey(base: string, key: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown> | null; errors?: GqlError[] };
  return { status: response.status, body, headers: response.headers };
}

const CREATE_ENDPOINT =
  'mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia", label: "by key" }) { id } }';

describe("creating and listing keys", () => {
  it("shows the key once, keeps only its prefix readable, and lists it with its role and applications", async () => {
    const owner = await signUp(ctx.app);
    const made = await createKey(owner, { role: "VIEWER", applications: ["CONSOLE_REST", "KV_REST"] });
    expect(made.key).toMatch(/^np_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(made.key.startsWith(made.accessToken.prefix)).toBe(true);
    expect(made.accessToken).toMatchObject({ role: "VIEWER", isActive: true, lastUsedAt: null, revokedAt: null });
    const listed = await tokens(owner);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toEqual(made.accessToken);
    expect(JSON.stringify(listed)).not.toContain(made.key.slice(made.accessToken.prefix.length));
  });

  it("filters by application", async () => {
    const owner = await signUp(ctx.app);
    const kv = await createKey(owner, { role: "ADMIN", applications: ["KV_REST"] });
    const functions = await createKey(owner, { role: "ADMIN", applications: ["FUNCTIONS_REST", "KV_REST"] });
    expect((await tokens(owner, "KV_REST")).map((t) => t.id).sort()).toEqual(
      [kv.accessToken.id, functions.accessToken.id].sort(),
    );
    expect((await tokens(owner, "FUNCTIONS_REST")).map((t) => t.id)).toEqual([functions.accessToken.id]);
    expect(await tokens(owner, "IPFS_REST")).toEqual([]);
  });

  it("refuses a name, role or application list the schema does not allow, naming the field", async () => {
    const owner = await signUp(ctx.app);
    const result = await owner.client.gql(
      "mutation($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { key } }",
      { input: { name: "", role: "ADMIN", applications: [] } },
    );
    expect(result.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const pointers = result.errors?.[0].extensions?.fields?.map((f) => f.pointer).sort();
    expect(pointers).toEqual(["/applications", "/name"]);
    expect(await tokens(owner)).toEqual([]);
  });
});

describe("a key on GraphQL", () => {
  it("acts with its role and no cookie: a VIEWER key reads and changes nothing, an ADMIN key changes", async () => {
    const owner = await signUp(ctx.app);
    const viewer = await createKey(owner, { role: "VIEWER", applications: ["CONSOLE_REST"] });
    const admin = await createKey(owner, { role: "ADMIN", applications: ["CONSOLE_REST"] });

    const read = await withKey(ctx.app.url, viewer.key, "{ viewer { email } endpoints { totalCount } }");
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ viewer: { email: owner.email }, endpoints: { totalCount: 0 } });

    const refused = await withKey(ctx.app.url, viewer.key, CREATE_ENDPOINT);
    expect(refused.body.errors?.[0].extensions?.code).toBe("FORBIDDEN");

    const made = await withKey(ctx.app.url, admin.key, CREATE_ENDPOINT);
    expect(made.body.errors).toBeUndefined();
    const { endpoints } = await owner.client.gqlOk<{ endpoints: { totalCount: number } }>(
      "{ endpoints { totalCount } }",
    );
    expect(endpoints.totalCount).toBe(1);
  });

  it("is the only credential read when sent: an owner's cookie beside a VIEWER key changes nothing", async () => {
    const owner = await signUp(ctx.app);
    const viewer = await createKey(owner, { role: "VIEWER", applications: ["CONSOLE_REST"] });
    const response = await owner.client.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": viewer.key },
      body: JSON.stringify({ query: CREATE_ENDPOINT }),
    });
    const body = (await response.json()) as { errors?: GqlError[] };
    expect(body.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    const bad = await owner.client.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "np_not-a-key" },
      body: JSON.stringify({ query: "{ viewer { email } }" }),
    });
    expect(bad.status).toBe(401);
  });

  it("refuses malformed, unknown and revoked keys alike, with 401 and no hint; a key of another application with 403", async () => {
    const owner = await signUp(ctx.app);
    const revoked = await createKey(owner, { role: "ADMIN", applications: ["CONSOLE_REST"] });
    await owner.client.gqlOk("mutation($id: ID!) { revokeAccessToken(id: $id) { id } }", {
      id: revoked.accessToken.id,
    });
    const unknown = `np_${"0".repeat(12)}_${"A".repeat(43)}`;
    const answers = [];
    for (const key of ["", "nonsense", `${revoked.key}x`, unknown, revoked.key]) {
      const answer = await withKey(ctx.app.url, key, "{ viewer { email } }");
      answers.push({ status: answer.status, body: answer.body });
    }
    expect(answers[0]).toEqual({
      status: 401,
      body: { data: null, errors: [{ message: "The API key is not valid.", extensions: { code: "UNAUTHENTICATED" } }] },
    });
    for (const answer of answers) expect(answer).toEqual(answers[0]);

    const functionsOnly = await createKey(owner, { role: "ADMIN", applications: ["FUNCTIONS_REST"] });
    const other = await withKey(ctx.app.url, functionsOnly.key, "{ viewer { email } }");
    expect(other.status).toBe(403);
    expect(other.body.errors?.[0].extensions?.code).toBe("FORBIDDEN");
  });

  it("cannot make keys or change its creator's own user", async () => {
    const owner = await signUp(ctx.app);
    const admin = await createKey(owner, { role: "ADMIN", applications: ["CONSOLE_REST"] });
    const more = await withKey(
      ctx.app.url,
      admin.key,
      'mutation { createAccessToken(input: { name: "more", role: ADMIN, applications: [CONSOLE_REST] }) { key } }',
    );
    expect(more.body.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    const password = await withKey(
      ctx.app.url,
      admin.key,
      'mutation { setPassword(currentPassword: "x", password: "new-password-1", passwordConfirmation: "new-password-1") { success } }',
    );
    expect(password.body.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    expect(await tokens(owner)).toHaveLength(1);
  });

  it("records when it was last used", async () => {
    const owner = await signUp(ctx.app);
    const made = await createKey(owner, { role: "VIEWER", applications: ["CONSOLE_REST"] });
    const before = Date.now();
    expect((await withKey(ctx.app.url, made.key, "{ endpoints { totalCount } }")).status).toBe(200);
    const [listed] = await tokens(owner);
    expect(listed.lastUsedAt).not.toBeNull();
    expect(Date.parse(listed.lastUsedAt as string)).toBeGreaterThanOrEqual(before - 1000);
  });

  it("holds its limit per client IP, saying when to retry", async () => {
    const owner = await signUp(ctx.app);
    const made = await createKey(owner, { role: "VIEWER", applications: ["CONSOLE_REST"] });
    const { updateAccessTokenIpRateLimit } = await owner.client.gqlOk<{ updateAccessTokenIpRateLimit: Token }>(
      `mutation($id: ID!) { updateAccessTokenIpRateLimit(id: $id, input: { rpm: 2 }) { ${TOKEN_FIELDS} } }`,
      { id: made.accessToken.id },
    );
    expect(updateAccessTokenIpRateLimit.ipRateLimit).toEqual({ rps: null, rpm: 2 });
    const statuses = [];
    let last: Awaited<ReturnType<typeof withKey>> | undefined;
    for (let i = 0; i < 3; i++) {
      last = await withKey(ctx.app.url, made.key, "{ endpoints { totalCount } }");
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(last?.body.errors?.[0].extensions?.code).toBe("RATE_LIMITED");
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The session is not counted under the key's limit.
    expect((await owner.client.gql("{ endpoints { totalCount } }")).status).toBe(200);
  });
});

describe("another account", () => {
  it("neither sees nor revokes nor limits a key", async () => {
    const alice = await signUp(ctx.app);
    const bob = await signUp(ctx.app);
    const made = await createKey(alice, { role: "ADMIN", applications: ["CONSOLE_REST"] });
    expect(await tokens(bob)).toEqual([]);
    const revoke = await bob.client.gql("mutation($id: ID!) { revokeAccessToken(id: $id) { id } }", {
      id: made.accessToken.id,
    });
    expect(revoke.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const limit = await bob.client.gql(
      "mutation($id: ID!) { updateAccessTokenIpRateLimit(id: $id, input: { rps: 1 }) { id } }",
      { id: made.accessToken.id },
    );
    expect(limit.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const [listed] = await tokens(alice);
    expect(listed).toMatchObject({ isActive: true, ipRateLimit: { rps: null, rpm: null } });
    expect((await withKey(ctx.app.url, made.key, "{ viewer { email } }")).body.data).toEqual({
      viewer: { email: alice.email },
    });
  });
});

describe("a function's HTTP address", () => {
  const callWith = (functionId: string, key: string) =>
    fetch(`${ctx.app.url}/functions/${functionId}/call`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ user_data: { n: 21 } }),
    });

  it("takes an ADMIN key made for FUNCTIONS_REST, and refuses the others", async () => {
    const owner = await signUp(ctx.app);
    const { createFunction } = await owner.client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      { input: { name: "double", code: "function main(params) { return params.user_data.n * 2; }" } },
    );
    const functions = await createKey(owner, { role: "ADMIN", applications: ["FUNCTIONS_REST"] });
    const ok = await callWith(createFunction.id, functions.key);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: unknown }).result).toBe(42);

    const consoleOnly = await createKey(owner, { role: "ADMIN", applications: ["CONSOLE_REST"] });
    expect((await callWith(createFunction.id, consoleOnly.key)).status).toBe(403);
    const viewer = await createKey(owner, { role: "VIEWER", applications: ["FUNCTIONS_REST"] });
    expect((await callWith(createFunction.id, viewer.key)).status).toBe(403);
    const unknown = await callWith(createFunction.id, `np_${"1".repeat(12)}_${"B".repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual({ error: "The API key is not valid.", code: "UNAUTHENTICATED" });
  });
});

describe("a revocation in a second service process", () => {
  let second: ServiceProcess;
  beforeAll(async () => {
    // The processes of one deployment share the database and the key API keys are hashed with.
    const accessTokenKey = readFileSync(join(ctx.app.dataDir, "access-token-key.secret"), "utf8").trim();
    second = await startServiceProcess({
      DATABASE_URL: ctx.app.database.url,
      NODEPLANE_ROLES: "api",
      NODEPLANE_ACCESS_TOKEN_KEY: accessTokenKey,
    });
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
  });

  it("is refused there as soon as the relay delivers it", async () => {
    const owner = await signUp(ctx.app);
    const made = await createKey(owner, { role: "VIEWER", applications: ["CONSOLE_REST"] });
    // Twice: the second answer comes from what that process keeps of the key.
    expect((await withKey(second.url, made.key, "{ viewer { email } }")).status).toBe(200);
    expect((await withKey(second.url, made.key, "{ viewer { email } }")).status).toBe(200);

    await owner.client.gqlOk("mutation($id: ID!) { revokeAccessToken(id: $id) { id } }", { id: made.accessToken.id });
    // PostgreSQL delivers the relay's notification in milliseconds; a loaded machine gets two seconds.
    const deadline = Date.now() + 2000;
    let status = (await withKey(second.url, made.key, "{ viewer { email } }")).status;
    while (status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await withKey(second.url, made.key, "{ viewer { email } }")).status;
    }
    expect(status).toBe(401);
    const [listed] = await tokens(owner);
    expect(listed.isActive).toBe(false);
    expect(listed.revokedAt).not.toBeNull();
  });
});
