/**
 * What a failing database shows: answers say only what the caller needs (INTERNAL and a request id the
 * operator finds in the log), and the log keeps no secret the failed statements carried.
 *
 * The database fails two ways, each deterministic: a CHECK constraint no row passes makes the writes of a
 * sign-up and of a stream with a destination secret fail (their parameters hold the argon2 password hash
 * and the sealed secret); then the service's database refuses connections, so the session lookup, sign-in,
 * the proxy and /healthz fail too.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import type { DestinationStream } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashSessionToken, SESSION_COOKIE } from "../../server/domains/account/service.ts";
import { type GqlClient, signIn, signUp, startTestApp, type TestApp, type TestUser } from "../support/api.ts";
import { testServerUrl } from "../support/database.ts";

const repoRoot = resolve(import.meta.dirname, "../..");
const logLines: string[] = [];
const logDestination: DestinationStream = { write: (line: string) => void logLines.push(line) };

let app: TestApp;
let owner: TestUser;
/** Everything a client saw: status line, headers and body of each answer, by what was asked. */
const answers: { what: string; status: number; headers: string; body: string }[] = [];
/** Values that must appear in no answer and no log line. */
const secrets: { what: string; value: string }[] = [];
let endpointPath = "";

let networksDir = "";
let secondApp: TestApp | undefined;

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

beforeAll(async () => {
  // A local chain node for the stream's network: a stream is accepted only on a network a node serves.
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-leaks-"));
  const networksConfig = join(networksDir, "networks.json");
  writeFileSync(networksConfig, JSON.stringify({ local: { networks: ["ethereum-mainnet"], blockTimeSeconds: 60 } }));
  // startChainNodes reads the process's environment.
  const saved = { local: process.env.NODEPLANE_LOCAL_CHAIN, networks: process.env.NODEPLANE_NETWORKS_CONFIG };
  process.env.NODEPLANE_LOCAL_CHAIN = "1";
  process.env.NODEPLANE_NETWORKS_CONFIG = networksConfig;
  try {
    app = await startTestApp({ LOG_LEVEL: "debug" }, { logDestination });
  } finally {
    restoreEnv("NODEPLANE_LOCAL_CHAIN", saved.local);
    restoreEnv("NODEPLANE_NETWORKS_CONFIG", saved.networks);
  }
  // A second process of the deployment: sessions made through the first are not in its session cache.
  secondApp = await startTestApp({ LOG_LEVEL: "debug" }, { database: app.database, logDestination });
  owner = await signUp(app);
  const { createEndpoint } = await owner.client.gqlOk<{ createEndpoint: { exId: string; initialToken: string } }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-mainnet" }) { exId initialToken } }`,
  );
  endpointPath = `/rpc/${createEndpoint.exId}/${createEndpoint.initialToken}`;
}, 60_000);

afterAll(async () => {
  await secondApp?.close();
  await app?.close();
  if (networksDir) rmSync(networksDir, { recursive: true, force: true });
});

async function record(what: string, response: Response): Promise<void> {
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
  answers.push({ what, status: response.status, headers, body: await response.text() });
}

async function graphql(what: string, client: GqlClient, query: string, variables: Record<string, unknown> = {}) {
  await record(
    what,
    await client.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    }),
  );
}

function sessionToken(client: GqlClient): string {
  const token = client.cookies.get(SESSION_COOKIE);
  if (!token) throw new Error("the client has no session cookie");
  return decodeURIComponent(token);
}

function keepSecretSession(what: string, client: GqlClient) {
  const token = sessionToken(client);
  secrets.push(
    { what: `${what} session token`, value: token },
    { what: `${what} session token hash`, value: hashSessionToken(token) },
  );
}

async function onServer<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

const createStream = `mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }`;
const streamInput = (secretKey: string) => ({
  name: "leak probe",
  network: "ethereum-mainnet",
  dataset: "BLOCK",
  destination: "S3",
  destinationAttributes: {
    accessKey: "probe-access",
    secretKey,
    bucket: "probe-bucket",
    endpoint: "s3.probe.example:9000",
    useSsl: false,
    objectPrefix: "p/",
    fileType: "JSON",
    fileCompression: "NONE",
  },
  startRange: 1,
  endRange: 9,
  status: "PAUSED",
});

describe("a failing database", () => {
  it("a write that fails answers INTERNAL without its statement, and the log keeps neither its parameters nor its row", async () => {
    keepSecretSession("owner", owner.client);
    const storedSecret = `stored-${randomBytes(12).toString("hex")}`;
    secrets.push({ what: "a destination secret stored before the failure", value: storedSecret });
    await owner.client.gqlOk(createStream, { input: streamInput(storedSecret) });

    await onServer(app.database.url, async (db) => {
      await db.query("ALTER TABLE users ADD CONSTRAINT leak_probe CHECK (false) NOT VALID");
      await db.query("ALTER TABLE streams ADD CONSTRAINT leak_probe CHECK (false) NOT VALID");
    });
    try {
      const password = `pw-${randomBytes(10).toString("hex")}`;
      secrets.push({ what: "a new user's password", value: password });
      await graphql(
        "sign-up whose user row is refused",
        app.client(),
        "mutation($input: SignUpInput!) { signUp(input: $input) { id } }",
        {
          input: { email: `leak-${randomBytes(4).toString("hex")}@example.com`, password },
        },
      );
      const failedSecret = `failed-${randomBytes(12).toString("hex")}`;
      secrets.push({ what: "a destination secret whose stream row is refused", value: failedSecret });
      await graphql("stream whose row is refused", owner.client, createStream, { input: streamInput(failedSecret) });
    } finally {
      await onServer(app.database.url, async (db) => {
        await db.query("ALTER TABLE users DROP CONSTRAINT leak_probe");
        await db.query("ALTER TABLE streams DROP CONSTRAINT leak_probe");
      });
    }
    for (const answer of answers) expect(answer.body, answer.what).toContain('"INTERNAL"');
  });

  it("with the database refusing connections, every path answers without internals", async () => {
    // A session the second process has not looked up yet: its lookup is the first thing to fail there.
    const second = await signIn(app, owner.email, owner.password);
    keepSecretSession("second", second.client);
    if (!secondApp) throw new Error("the second process is not started");
    const inSecondApp = secondApp.client();
    for (const [name, value] of second.client.cookies) inSecondApp.cookies.set(name, value);
    const name = app.database.name;
    await onServer(testServerUrl(), async (admin) => {
      await admin.query(`ALTER DATABASE ${admin.escapeIdentifier(name)} ALLOW_CONNECTIONS false`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
      for (let i = 0; i < 100; i++) {
        const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [
          name,
        ]);
        if (rows[0].n === 0) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("the service's database connections did not end");
    });
    try {
      await graphql("signed-in query, session not cached", inSecondApp, "{ viewer { email } }");
      await graphql("signed-in query, session cached", owner.client, "{ endpoints { totalCount } }");
      await graphql(
        "sign-in",
        app.client(),
        "mutation($email: String!, $password: String!) { signIn(email: $email, password: $password) { id } }",
        { email: owner.email, password: owner.password },
      );
      await graphql(
        "sign-in with a wrong password",
        app.client(),
        "mutation($email: String!, $password: String!) { signIn(email: $email, password: $password) { id } }",
        { email: owner.email, password: "wrong-password-1" },
      );
      await record(
        "proxy call",
        await fetch(new URL(endpointPath, app.url), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        }),
      );
      const notJson = { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" };
      await record("a GraphQL body that is not JSON", await fetch(new URL("/graphql", app.url), notJson));
      await record("a proxy body that is not JSON", await fetch(new URL(endpointPath, app.url), notJson));
      await record("health check", await fetch(new URL("/healthz", app.url)));
      await record("console page", await fetch(new URL("/streams", app.url)));
      await record("static file", await fetch(new URL("/assets/none.js", app.url)));
    } finally {
      await onServer(testServerUrl(), (admin) =>
        admin.query(`ALTER DATABASE ${admin.escapeIdentifier(name)} ALLOW_CONNECTIONS true`),
      );
    }
    const failed = answers.filter((a) => a.status >= 500 || a.body.includes('"INTERNAL"'));
    expect(failed.map((a) => a.what)).toEqual(
      expect.arrayContaining([
        "signed-in query, session not cached",
        "signed-in query, session cached",
        "sign-in",
        "health check",
      ]),
    );
  });

  it("no answer shows SQL, parameters, hashes, stacks or paths", () => {
    const leaks: string[] = [];
    for (const answer of answers) {
      const text = `${answer.status}\n${answer.headers}\n${answer.body}`;
      for (const [what, pattern] of internals) if (pattern.test(text)) leaks.push(`${answer.what}: ${what}`);
      for (const secret of secrets) if (text.includes(secret.value)) leaks.push(`${answer.what}: ${secret.what}`);
    }
    expect(leaks).toEqual([]);
  });

  it("each INTERNAL answer names a request id the log has, with the failure", () => {
    const internal = answers.filter((a) => a.body.includes('"INTERNAL"'));
    expect(internal.length).toBeGreaterThan(0);
    for (const answer of internal) {
      const requestId = /"requestId":"([^"]+)"/.exec(answer.body)?.[1];
      expect(requestId, answer.what).toBeTruthy();
      const logged = logLines.filter((line) => line.includes(`"${requestId}"`));
      expect(
        logged.some((line) => /"level":50/.test(line) && /"err":/.test(line)),
        answer.what,
      ).toBe(true);
    }
  });

  it("the log keeps no secret: no password hash, session token or its hash, destination secret or SQL parameter", () => {
    expect(logLines.length).toBeGreaterThan(0);
    const leaks: string[] = [];
    logLines.forEach((line, n) => {
      for (const [what, pattern] of logSecrets) if (pattern.test(line)) leaks.push(`line ${n}: ${what}`);
      for (const secret of secrets) if (line.includes(secret.value)) leaks.push(`line ${n}: ${secret.what}`);
    });
    expect(leaks).toEqual([]);
  });
});

/** What an answer must not show. */
const internals: [string, RegExp][] = [
  ["SQL", /\b(select|insert|update|delete) |from "|Failed query/i],
  ["parameters", /params|parameters/i],
  ["an argon2 hash", /\$argon2/],
  ["a stack frame", /\n\s+at |\bat .+:\d+:\d+/],
  ["a file path", new RegExp(`${repoRoot}|node_modules|\\.[cm]?[jt]s:\\d+`)],
  ["a database error", /violates|relation "|constraint|not currently accepting connections|ECONNREFUSED/i],
];

/** What a log line must not keep (SQL text and error messages are the operator's; values are not). */
const logSecrets: [string, RegExp][] = [
  ["an argon2 hash", /\$argon2/],
  ["a sealed secret", /v1\.[\w-]{8,}\.[\w-]{8,}\.[\w-]+/],
  ["query parameters", /params: |"params":\s*\[|"parameters":\s*\[/],
  ["a failing row", /Failing row contains/],
];
