// The REST API, tested from its own OpenAPI document: every path and method of the document is called
// with a key, in an order the document gives (creates first, then reads and changes, deletes last), and
// each answer's status and body are validated against the document's schema for that status by ajv. The
// refusals (no key, a bad, revoked or wrong-application key, a VIEWER's change, bad bodies, unknown paths)
// loop over the same operations. Then what is REST's own: idempotency keys, ETags, paging links, per-IP
// limits, the same record through REST and GraphQL, and a revocation seen by a second service process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { signUp, startTestApp, type TestApp, type TestUser } from "../support/api.ts";
import { openInvoiceOf, untaxedBilling } from "../support/billing.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

let node: AnvilNode;
let app: TestApp;
let db: Db;
let networksDir: string;

// Streams and webhooks need a chain node serving their network: an anvil as the service's only upstream.
beforeAll(async () => {
  node = await startAnvil({ chainId: 11155111 });
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-networks-"));
  const file = join(networksDir, "networks.json");
  writeFileSync(
    file,
    JSON.stringify({
      local: { networks: [] },
      upstreams: { "ethereum-sepolia": { http: node.httpUrl, ws: node.wsUrl } },
    }),
  );
  // startChainNodes reads the process environment (the config does not carry the networks file).
  process.env.NODEPLANE_NETWORKS_CONFIG = file;
  process.env.NODEPLANE_LOCAL_CHAIN = "0";
  app = await startTestApp();
  db = openDatabase(app.database.url, 2);
}, 120_000);

afterAll(async () => {
  await db?.$client.end();
  await app?.close();
  await node?.stop();
  rmSync(networksDir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  operationId: string;
  application: string;
  successStatus: string;
  example?: Json;
  hasBody: boolean;
}

const document = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../schemas/generated/openapi.json"), "utf8"),
) as { servers: { url: string }[]; paths: Record<string, Record<string, Json>> };
const PREFIX = document.servers[0].url;
const ALL_APPLICATIONS = ["CONSOLE_REST", "FUNCTIONS_REST", "KV_REST", "STREAMS_REST", "WEBHOOKS_REST"];

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document as object, "openapi");

const escapePointer = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/** Fails naming the operation and ajv's errors when `body` does not fit the document's schema for `status`. */
function expectFitsDocument(op: Operation, status: number, contentType: string | null, body: unknown) {
  const responses = (document.paths[op.path][op.method.toLowerCase()] as { responses: Record<string, Json> }).responses;
  expect(Object.keys(responses), `${op.operationId}: ${status} is documented`).toContain(String(status));
  const content = responses[String(status)].content as Record<string, unknown> | undefined;
  if (!content) return;
  const mediaType = Object.keys(content)[0];
  expect(contentType ?? "").toContain(mediaType);
  const pointer = `openapi#/paths/${escapePointer(op.path)}/${op.method.toLowerCase()}/responses/${status}/content/${escapePointer(mediaType)}/schema`;
  const validate = ajv.getSchema(pointer);
  if (!validate) throw new Error(`no schema at ${pointer}`);
  const valid = validate(body);
  expect(valid, `${op.method} ${op.path} ${status}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

/** Every operation of the document that takes a key, in the order a resource's life needs them. */
function operations(): Operation[] {
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths))
    for (const [method, op] of Object.entries(methods)) {
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      const responses = op.responses as Record<string, Json>;
      const body = (op.requestBody as { content: Record<string, { example?: Json }> } | undefined)?.content[
        "application/json"
      ];
      found.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        application: op["x-application"] as string,
        successStatus: ["200", "201", "204"].find((s) => s in responses) ?? "200",
        example: body?.example,
        hasBody: body !== undefined,
      });
    }
  const depth = (op: Operation) => op.path.split("/").length;
  const phase = (op: Operation) => (op.method === "DELETE" ? 2 : op.successStatus === "201" ? 0 : 1);
  return found.sort(
    (a, b) =>
      phase(a) - phase(b) ||
      (phase(a) === 2 ? depth(b) - depth(a) : phase(a) === 0 ? depth(a) - depth(b) : 0) ||
      a.path.localeCompare(b.path),
  );
}

async function createKey(user: TestUser, role: string, applications: string[]) {
  const { createAccessToken } = await user.client.gqlOk<{
    createAccessToken: { key: string; accessToken: { id: string } };
  }>("mutation($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { key accessToken { id } } }", {
    input: { name: "rest", role, applications },
  });
  return { key: createAccessToken.key, id: createAccessToken.accessToken.id };
}

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers["x-api-key"] = options.key;
  const text = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (text !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${base}${PREFIX}${path}`, { method, headers, body: text });
  const answer = await response.text();
  // A file (an invoice's PDF) is its text; every other answer is JSON.
  const json = /json/.test(response.headers.get("content-type") ?? "application/json");
  return {
    status: response.status,
    headers: response.headers,
    body: answer && json ? JSON.parse(answer) : answer || undefined,
  };
}

/** The path with each `{param}` filled from the resource created at the path before it. */
function concretePath(path: string, created: Map<string, string>): string {
  const segments = path.split("/");
  return segments
    .map((segment, i) => {
      if (!segment.startsWith("{")) return segment;
      const value = created.get(segments.slice(0, i).join("/"));
      if (value === undefined) throw new Error(`nothing created at ${segments.slice(0, i).join("/")} for ${path}`);
      return encodeURIComponent(value);
    })
    .join("/");
}

/** Where REST reads what only billing makes: paths whose resources the account is given before a walk. */
const MADE_BY_BILLING = ["/billing/invoices", "/billing/charges"];

/** Gives the user an invoice and a charge of it (a card paying it): the resources REST reads but never creates. */
async function billedUser(user: TestUser): Promise<Map<string, string>> {
  const billing = untaxedBilling(db, app.services.events);
  const invoiceId = await openInvoiceOf(db, billing, user);
  const card = { number: "4242424242424242", expMonth: 12, expYear: new Date().getUTCFullYear() + 1, cvc: "123" };
  await user.client.gqlOk("mutation($card: PaymentCardInput) { updatePaymentMethod(card: $card) { label } }", { card });
  const { retryPayment } = await user.client.gqlOk<{ retryPayment: { charge: { id: string } } }>(
    "mutation($invoiceId: ID!) { retryPayment(invoiceId: $invoiceId) { charge { id } } }",
    { invoiceId },
  );
  return new Map([
    ["/billing/invoices", invoiceId],
    ["/billing/charges", retryPayment.charge.id],
  ]);
}

/** Runs every operation once as `key`'s owner; answers what each call returned, by operation id. */
async function walkDocument(key: string, seeded = new Map<string, string>()) {
  const created = new Map(seeded);
  const answers = new Map<string, Answer>();
  for (const op of operations()) {
    const path = concretePath(op.path, created);
    const answer = await call(app.url, op.method, path, { key, body: op.hasBody ? op.example : undefined });
    answers.set(op.operationId, answer);
    expect(answer.status, `${op.method} ${path}: ${JSON.stringify(answer.body)}`).toBe(Number(op.successStatus));
    expectFitsDocument(op, answer.status, answer.headers.get("content-type"), answer.body);
    if (op.successStatus === "201") {
      const made = answer.body as { id?: string; key?: string };
      created.set(op.path, String(made.id ?? made.key));
    }
  }
  return { created, answers };
}

describe("every operation of the OpenAPI document", () => {
  it("answers its documented status and a body that fits the document's schema", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ALL_APPLICATIONS);
    const { answers } = await walkDocument(key, await billedUser(owner));
    const pdf = answers.get("getInvoicePdf");
    expect(String(pdf?.body).startsWith("%PDF-")).toBe(true);
    expect(pdf?.headers.get("content-disposition")).toMatch(/^attachment; filename=".+\.pdf"$/);
    expect([...answers.keys()].sort()).toEqual(
      operations()
        .map((op) => op.operationId)
        .sort(),
    );
    // The document itself is served, unauthenticated, at its documented path.
    const served = await call(app.url, "GET", "/openapi.json");
    expect(served.status).toBe(200);
    expect(served.body).toEqual(document);
  });

  it("refuses a VIEWER key every change (403, nothing changed) and lets it read", async () => {
    const owner = await signUp(app);
    const admin = await createKey(owner, "ADMIN", ALL_APPLICATIONS);
    const viewer = await createKey(owner, "VIEWER", ALL_APPLICATIONS);
    const created = await billedUser(owner);
    // The resources the viewer's calls name are the admin's.
    for (const op of operations().filter((o) => o.successStatus === "201")) {
      const answer = await call(app.url, op.method, concretePath(op.path, created), {
        key: admin.key,
        body: op.example,
      });
      const made = answer.body as { id?: string; key?: string };
      created.set(op.path, String(made.id ?? made.key));
    }
    const before = await call(app.url, "GET", "/endpoints", { key: viewer.key });
    for (const op of operations()) {
      const path = concretePath(op.path, created);
      const answer = await call(app.url, op.method, path, {
        key: viewer.key,
        body: op.hasBody ? op.example : undefined,
      });
      const expected = op.method === "GET" ? Number(op.successStatus) : 403;
      expect(answer.status, `${op.method} ${path} as VIEWER: ${JSON.stringify(answer.body)}`).toBe(expected);
      expectFitsDocument(op, answer.status, answer.headers.get("content-type"), answer.body);
    }
    expect((await call(app.url, "GET", "/endpoints", { key: viewer.key })).body).toEqual(before.body);
  });

  it("refuses a key of another application (403) and calls without a usable key (401, the same words)", async () => {
    const owner = await signUp(app);
    const revoked = await createKey(owner, "ADMIN", ALL_APPLICATIONS);
    await owner.client.gqlOk("mutation($id: ID!) { revokeAccessToken(id: $id) { id } }", { id: revoked.id });
    const unknown = `np_${"0".repeat(12)}_${"A".repeat(43)}`;
    const created = new Map<string, string>(
      [
        ...operations()
          .filter((op) => op.successStatus === "201")
          .map((op) => op.path),
        ...MADE_BY_BILLING,
      ].map((path) => [path, "00000000-0000-4000-8000-000000000000"]),
    );
    const wrongKeys = new Map<string, { key: string }>();
    for (const op of operations()) {
      const path = concretePath(op.path, created);
      const body = op.hasBody ? op.example : undefined;
      // One key per application left out: an account keeps at most 50 active keys.
      let wrongApplication = wrongKeys.get(op.application);
      if (!wrongApplication) {
        const others = ALL_APPLICATIONS.filter((a) => a !== op.application);
        wrongApplication = await createKey(owner, "ADMIN", others);
        wrongKeys.set(op.application, wrongApplication);
      }
      const refused = await call(app.url, op.method, path, { key: wrongApplication.key, body });
      expect(refused.status, `${op.method} ${path} with a key not made for ${op.application}`).toBe(403);
      expectFitsDocument(op, 403, refused.headers.get("content-type"), refused.body);
      const words = new Set<string>();
      for (const key of [undefined, "nonsense", unknown, revoked.key, `${revoked.key}x`]) {
        const answer = await call(app.url, op.method, path, { key, body });
        expect(answer.status).toBe(401);
        expectFitsDocument(op, 401, answer.headers.get("content-type"), answer.body);
        if (key !== undefined) words.add(JSON.stringify(answer.body));
      }
      expect(words.size, "malformed, unknown and revoked keys are refused alike").toBe(1);
    }
    // Bearer is the same key.
    const admin = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    const bearer = await call(app.url, "GET", "/endpoints", { headers: { authorization: `Bearer ${admin.key}` } });
    expect(bearer.status).toBe(200);
  });
});

describe("bad input", () => {
  it("names each field a body gets wrong (422), refuses what is not a JSON object (400), and writes nothing", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ALL_APPLICATIONS);
    for (const op of operations().filter((o) => o.successStatus === "201" && !o.path.includes("{"))) {
      const listBefore = await call(app.url, "GET", op.path, { key });
      const wrong = await call(app.url, op.method, op.path, { key, body: { unexpected: 1 } });
      expect(wrong.status, `${op.operationId}: ${JSON.stringify(wrong.body)}`).toBe(422);
      expectFitsDocument(op, 422, wrong.headers.get("content-type"), wrong.body);
      const pointers = ((wrong.body as { errors: { pointer: string }[] }).errors ?? []).map((e) => e.pointer);
      expect(pointers.length, `${op.operationId} names the bad fields`).toBeGreaterThan(1);
      const notObject = await call(app.url, op.method, op.path, { key, body: [op.example] });
      expect(notObject.status).toBe(400);
      const notJson = await call(app.url, op.method, op.path, { key, rawBody: "{" });
      expect(notJson.status).toBe(400);
      expect(notJson.headers.get("content-type")).toContain("application/problem+json");
      if (listBefore.status === 200)
        expect((await call(app.url, "GET", op.path, { key })).body, `${op.operationId} wrote nothing`).toEqual(
          listBefore.body,
        );
    }
  });

  it("gives the field pointers GraphQL gives for the same input", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    const input = { chain: "ethereum", network: "ethereum-sepolia", label: "" };
    const rest = await call(app.url, "POST", "/endpoints", { key, body: input });
    const graphql = await owner.client.gql(
      "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
      {
        input,
      },
    );
    expect(rest.status).toBe(422);
    expect((rest.body as { errors: unknown[] }).errors).toEqual(graphql.errors?.[0].extensions?.fields);
    expect((rest.body as { code: string }).code).toBe(graphql.errors?.[0].extensions?.code);
  });

  it("answers an unknown path, an unknown id and an unknown parameter as problem documents", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    const unknownPath = await call(app.url, "GET", "/nothing-here", { key });
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.headers.get("content-type")).toContain("application/problem+json");
    expect(unknownPath.body).toMatchObject({ status: 404, code: "NOT_FOUND" });
    const unknownId = await call(app.url, "GET", "/endpoints/00000000-0000-4000-8000-000000000000", { key });
    expect(unknownId.status).toBe(404);
    const badParameters = await call(app.url, "GET", "/endpoints?first=many&colour=red", { key });
    expect(badParameters.status).toBe(422);
    expect(badParameters.body).toMatchObject({
      errors: [
        { pointer: "/first", message: "must be a whole number" },
        { pointer: "/colour", message: "is not a parameter of this operation" },
      ],
    });
  });
});

describe("nested add-ons", () => {
  it("finds an endpoint's install only under that endpoint's path, and changes nothing elsewhere", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    const endpoint = { chain: "ethereum", network: "ethereum-sepolia" };
    const first = (await call(app.url, "POST", "/endpoints", { key, body: endpoint })).body as { id: string };
    const second = (await call(app.url, "POST", "/endpoints", { key, body: endpoint })).body as { id: string };
    const installed = await call(app.url, "POST", `/endpoints/${first.id}/addons`, {
      key,
      body: { planId: "trace-debug-starter" },
    });
    expect(installed.status).toBe(201);
    const install = installed.body as { id: string };
    const change = { currentPlanId: "trace-debug-starter", newPlanId: "trace-debug-pro", interval: "MONTHLY" };
    const elsewhere = await call(app.url, "PATCH", `/endpoints/${second.id}/addons/${install.id}`, {
      key,
      body: change,
    });
    expect(elsewhere.status).toBe(404);
    const removedElsewhere = await call(app.url, "DELETE", `/endpoints/${second.id}/addons/${install.id}`, {
      key,
      body: { cancelationReason: "wrong endpoint", immediately: true },
    });
    expect(removedElsewhere.status).toBe(404);
    const listed = await call(app.url, "GET", `/endpoints/${first.id}/addons`, { key });
    expect(listed.body).toMatchObject({
      data: [{ id: install.id, plan: { id: "trace-debug-starter" }, isPendingDeactivation: false }],
    });
    expect((await call(app.url, "GET", `/endpoints/${second.id}/addons`, { key })).body).toMatchObject({ data: [] });
    const changed = await call(app.url, "PATCH", `/endpoints/${first.id}/addons/${install.id}`, { key, body: change });
    expect(changed.body).toMatchObject({ id: install.id, plan: { id: "trace-debug-pro" } });
  });
});

describe("what REST adds", () => {
  it("answers a retried create with the first answer, refuses the key with another body, and creates once", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    const body = { chain: "ethereum", network: "ethereum-sepolia", label: "once" };
    const headers = { "idempotency-key": "create-once-1" };
    const first = await call(app.url, "POST", "/endpoints", { key, body, headers });
    const again = await call(app.url, "POST", "/endpoints", { key, body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await call(app.url, "POST", "/endpoints", { key, body: { ...body, label: "twice" }, headers });
    expect(other.status).toBe(422);
    const listed = (await call(app.url, "GET", "/endpoints", { key })).body as { data: unknown[] };
    expect(listed.data).toHaveLength(1);
    // Keys are the account's: another account's same key is its own.
    const stranger = await signUp(app);
    const strangerKey = await createKey(stranger, "ADMIN", ["CONSOLE_REST"]);
    const theirs = await call(app.url, "POST", "/endpoints", { key: strangerKey.key, body, headers });
    expect(theirs.status).toBe(201);
    expect((theirs.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
  });

  it("pages with nextCursor and a Link header, and answers 304 to a matching If-None-Match", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    for (const label of ["a", "b"])
      await call(app.url, "POST", "/endpoints", {
        key,
        body: { chain: "ethereum", network: "ethereum-sepolia", label },
      });
    const seen: string[] = [];
    let next: string | null = "/endpoints?first=1";
    while (next) {
      const page = await call(app.url, "GET", next, { key });
      const body = page.body as { data: { label: string }[]; nextCursor: string | null };
      seen.push(...body.data.map((e) => e.label));
      const link = page.headers.get("link");
      expect(Boolean(link)).toBe(body.nextCursor !== null);
      next = link ? (/<([^>]+)>; rel="next"/.exec(link)?.[1]?.slice(PREFIX.length) ?? null) : null;
    }
    expect(seen.sort()).toEqual(["a", "b"]);
    const first = await call(app.url, "GET", "/endpoints", { key });
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^".+"$/);
    const unchanged = await fetch(`${app.url}${PREFIX}/endpoints`, {
      headers: { "x-api-key": key, "if-none-match": etag },
    });
    expect(unchanged.status).toBe(304);
    await call(app.url, "PATCH", `/endpoints/${(first.body as { data: { id: string }[] }).data[0].id}`, {
      key,
      body: { label: "changed" },
    });
    const changed = await fetch(`${app.url}${PREFIX}/endpoints`, {
      headers: { "x-api-key": key, "if-none-match": etag },
    });
    expect(changed.status).toBe(200);
  });

  it("sends RateLimit-* from the key's per-IP limits and refuses past them with 429", async () => {
    const owner = await signUp(app);
    const { key, id } = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    const unlimited = await call(app.url, "GET", "/endpoints", { key });
    expect(unlimited.headers.get("ratelimit-limit")).toBeNull();
    await owner.client.gqlOk("mutation($id: ID!) { updateAccessTokenIpRateLimit(id: $id, input: { rpm: 3 }) { id } }", {
      id,
    });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await call(app.url, "GET", "/endpoints", { key });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("ratelimit-limit")).toBe("3");
      remaining.push(answer.headers.get("ratelimit-remaining") ?? "");
      expect(Number(answer.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const refused = await call(app.url, "GET", "/endpoints", { key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({ status: 429, code: "RATE_LIMITED" });
  });

  it("makes the same record through REST as through GraphQL", async () => {
    const owner = await signUp(app);
    const { key } = await createKey(owner, "ADMIN", ["CONSOLE_REST", "KV_REST"]);
    const fields = "id name exId label chain network status httpUrl wssUrl tags { tagId label } createdAt";
    const viaRest = (await call(app.url, "POST", "/endpoints", {
      key,
      body: { chain: "ethereum", network: "ethereum-sepolia", label: "same" },
    })) as { body: { id: string } };
    const { endpoint } = await owner.client.gqlOk<{ endpoint: Json }>(
      `query($id: ID!) { endpoint(id: $id) { ${fields} } }`,
      {
        id: viaRest.body.id,
      },
    );
    expect((await call(app.url, "GET", `/endpoints/${viaRest.body.id}`, { key })).body).toMatchObject(endpoint);
    await owner.client.gqlOk('mutation($id: ID!) { updateEndpointLabel(id: $id, label: "renamed") { id } }', {
      id: viaRest.body.id,
    });
    expect((await call(app.url, "GET", `/endpoints/${viaRest.body.id}`, { key })).body).toMatchObject({
      label: "renamed",
    });
    await call(app.url, "POST", "/kv/values", { key, body: { key: "k", value: "v" } });
    await owner.client.gqlOk('mutation { createValue(input: { key: "g", value: "v" }) { key } }');
    const { values } = await owner.client.gqlOk<{ values: { edges: { node: Json }[] } }>(
      "{ values { edges { node { key value createdAt updatedAt } } } }",
    );
    const listed = (await call(app.url, "GET", "/kv/values", { key })).body as { data: Json[] };
    expect(listed.data).toEqual(values.edges.map((e) => e.node));
  });
});

describe("a revocation in a second service process", () => {
  let second: ServiceProcess;
  beforeAll(async () => {
    const accessTokenKey = readFileSync(join(app.dataDir, "access-token-key.secret"), "utf8").trim();
    second = await startServiceProcess({
      DATABASE_URL: app.database.url,
      NODEPLANE_ROLES: "api",
      NODEPLANE_ACCESS_TOKEN_KEY: accessTokenKey,
    });
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
  });

  it("refuses the key at once here and there", async () => {
    const owner = await signUp(app);
    const made = await createKey(owner, "ADMIN", ["CONSOLE_REST"]);
    expect((await call(second.url, "GET", "/endpoints", { key: made.key })).status).toBe(200);
    expect((await call(second.url, "GET", "/endpoints", { key: made.key })).status).toBe(200);
    await owner.client.gqlOk("mutation($id: ID!) { revokeAccessToken(id: $id) { id } }", { id: made.id });
    expect((await call(app.url, "GET", "/endpoints", { key: made.key })).status).toBe(401);
    // PostgreSQL delivers the relay's notification in milliseconds; a loaded machine gets two seconds.
    const deadline = Date.now() + 2000;
    let status = (await call(second.url, "GET", "/endpoints", { key: made.key })).status;
    while (status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await call(second.url, "GET", "/endpoints", { key: made.key })).status;
    }
    expect(status).toBe(401);
  });
});
