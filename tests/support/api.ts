/**
 * API test helpers: the service in-process on a free port with a fresh database, and a small GraphQL
 * client that keeps its session cookie, one client per simulated user.
 *
 *   const ctx = useTestApp();                       // in a test file: starts in beforeAll, stops in afterAll
 *   const alice = await signUp(ctx.app);             // a new account; alice.client is signed in
 *   const { data, errors } = await alice.client.gql("{ viewer { email } }");
 *   const { webhook } = await alice.client.opOk("Webhook", { id });   // a screen's operation, typed
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DestinationStream } from "pino";
import { afterAll, beforeAll } from "vitest";
import type { App } from "../../server/app.ts";
import type { Resolvers } from "../../server/graphql/resolvers.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { TEST_EGRESS_ALLOW } from "./egress.ts";
import { type OperationName, operationDocument, type ResultOf, type VariablesArg } from "./operations.ts";
import { TEST_SIGNUPS_PER_HOUR } from "./signups.ts";

export interface GqlError {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: { code?: string; fields?: { pointer: string; message: string }[]; [key: string]: unknown };
}

export interface GqlResult<T = Record<string, unknown>> {
  data: T | null | undefined;
  errors: GqlError[] | undefined;
  /** The HTTP status of the response. */
  status: number;
}

/** A GraphQL client for one user: it keeps the cookies the service sets, like a browser would. */
export class GqlClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  /** A plain HTTP request to the service carrying this user's cookies. */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set("cookie", this.cookieHeader());
    const response = await fetch(new URL(path, this.baseUrl), { ...init, headers, redirect: "manual" });
    this.storeCookies(response);
    return response;
  }

  /** Runs one operation against /graphql. Never throws for GraphQL errors: they are in `errors`. */
  async gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GqlResult<T>> {
    const response = await this.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query, variables: variables ?? {} }),
    });
    const text = await response.text();
    let body: { data?: T | null; errors?: GqlError[] };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`/graphql answered ${response.status} with a body that is not JSON: ${text.slice(0, 500)}`);
    }
    return { data: body.data, errors: body.errors, status: response.status };
  }

  /** Like `gql`, but throws when the result has errors, and returns `data`. */
  async gqlOk<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T> {
    const result = await this.gql<T>(query, variables);
    if (result.errors?.length || !result.data) {
      throw new Error(`GraphQL operation failed: ${JSON.stringify(result.errors ?? result)}`);
    }
    return result.data;
  }

  /**
   * Runs a screen's named operation as the console sends it, typed by the generated `Operations`:
   * `await client.op("Webhook", { id })` answers `{ data: WebhookQuery, errors, status }`.
   */
  async op<N extends OperationName>(name: N, ...[variables]: VariablesArg<N>): Promise<GqlResult<ResultOf<N>>> {
    return this.gql<ResultOf<N>>(await operationDocument(name), variables);
  }

  /** Like `op`, but throws when the result has errors, and returns `data`. */
  async opOk<N extends OperationName>(name: N, ...[variables]: VariablesArg<N>): Promise<ResultOf<N>> {
    return this.gqlOk<ResultOf<N>>(await operationDocument(name), variables);
  }

  /** A new client for the same service with no cookies (another browser). */
  fresh(): GqlClient {
    return new GqlClient(this.baseUrl);
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  private storeCookies(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key, val = ""] = attribute.split("=").map((s) => s.trim());
        if (key.toLowerCase() === "max-age") return Number(val) <= 0;
        if (key.toLowerCase() === "expires") return Date.parse(val) <= Date.now();
        return false;
      });
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

export interface TestApp {
  /** `http://127.0.0.1:<port>` */
  url: string;
  database: TestDatabase;
  dataDir: string;
  /** The service's long-lived parts (its events, caches), for a test that must reach behind the API. */
  services: App["services"];
  /** The API's resolvers, every domain's merged. */
  resolvers: Resolvers;
  /** The stream engine's supervised process, when the app runs its engine in one (NODEPLANE_ENGINE_PROCESS=child). */
  engineChild: App["engineChild"];
  /** A new client with no session. */
  client(): GqlClient;
  close(): Promise<void>;
}

/** The API's resolvers of a built service (every domain's plugin's map, merged); it must serve the API. */
export function apiResolvers(app: App): Resolvers {
  if (!app.services.resolvers) throw new Error("this service serves no API (NODEPLANE_ROLES without api)");
  return app.services.resolvers;
}

/**
 * Starts the service in this process on a free port, on a fresh database of its own, or on
 * `options.database` (another app's, to play a second process of one deployment; left for its owner
 * to drop). `env` adds to or overrides the environment the config is loaded from; `options.logDestination`
 * receives the service's log (set LOG_LEVEL in `env` for more than warnings).
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { database?: TestDatabase; logDestination?: DestinationStream } = {},
): Promise<TestApp> {
  // Imported lazily, so a test file that only uses the client or the database helpers does not
  // load the whole service.
  const { buildApp } = await import("../../server/app.ts");
  const { loadConfig } = await import("../../server/platform/config.ts");

  const shared = options.database;
  const database = shared ?? (await createTestDatabase());
  const dropOwn = async (dropOptions?: { force?: boolean }) => {
    if (!shared) await database.drop(dropOptions);
  };
  const dataDir = mkdtempSync(join(tmpdir(), "nodeplane-api-"));
  let built: App | undefined;
  try {
    const config = loadConfig({
      ...process.env,
      NODE_ENV: "test",
      DATABASE_URL: database.url,
      PORT: "0",
      HOST: "127.0.0.1",
      NODEPLANE_DATA_DIR: dataDir,
      NODEPLANE_DEMO_PASSWORD: "demo-password-for-tests",
      NODEPLANE_EGRESS_ALLOW: TEST_EGRESS_ALLOW,
      NODEPLANE_SIGNUPS_PER_HOUR: TEST_SIGNUPS_PER_HOUR,
      ...env,
    });
    built = await buildApp(config, { logDestination: options.logDestination });
    const { app } = built;
    if (!app.server.listening) await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    if (!address || typeof address === "string") throw new Error(`unexpected server address ${String(address)}`);
    const url = `http://127.0.0.1:${address.port}`;
    const running = built;
    return {
      url,
      database,
      dataDir,
      services: running.services,
      // Read when asked: a service started without the API role has none.
      get resolvers() {
        return apiResolvers(running);
      },
      engineChild: () => running.engineChild(),
      client: () => new GqlClient(url),
      async close() {
        try {
          await running.close();
        } finally {
          await dropOwn();
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await built?.close().catch(() => undefined);
    // Not forced: connections a half-started app left open would die with errors that hide this one.
    await dropOwn({ force: false }).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * One service per test file: started before the file's tests, stopped after them.
 * Read `ctx.app` inside tests and hooks (it is set once `beforeAll` has run).
 */
export function useTestApp(env: Record<string, string> = {}): { readonly app: TestApp } {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(env);
  });
  afterAll(async () => {
    await app?.close();
  });
  return {
    get app(): TestApp {
      if (!app) throw new Error("the test app is not started: use ctx.app inside a test or hook");
      return app;
    },
  };
}

/**
 * Two services on one database, as two processes of one deployment, for a test file; `onSecond(user)`
 * is a client of the second carrying the user's session cookie (the same browser, another process).
 */
export function useTwoTestApps(): {
  readonly first: TestApp;
  readonly second: TestApp;
  onSecond(user: TestUser): GqlClient;
} {
  let apps: [TestApp, TestApp] | undefined;
  beforeAll(async () => {
    const first = await startTestApp();
    apps = [first, await startTestApp({}, { database: first.database })];
  });
  afterAll(async () => {
    await apps?.[1].close();
    await apps?.[0].close();
  });
  const started = (): [TestApp, TestApp] => {
    if (!apps) throw new Error("the test apps are not started: use them inside a test or hook");
    return apps;
  };
  return {
    get first() {
      return started()[0];
    },
    get second() {
      return started()[1];
    },
    onSecond(user) {
      const client = new GqlClient(started()[1].url);
      for (const [name, value] of user.client.cookies) client.cookies.set(name, value);
      return client;
    },
  };
}

export interface TestUser {
  client: GqlClient;
  email: string;
  password: string;
  /** The `viewer` the sign-up or sign-in returned. */
  viewer: { id: string; userId: string; email: string; userRole: string; [field: string]: unknown };
}

const viewerFields = "id userId email userRole isPrimaryUser";

/** A unique e-mail address for a test user. */
export function uniqueEmail(prefix = "user"): string {
  return `${prefix}-${randomBytes(5).toString("hex")}@example.com`;
}

/** Signs up a new account (owner) on a new client; the client keeps the session. */
export async function signUp(
  app: TestApp,
  input: { email?: string; password?: string; fullName?: string; companyName?: string } = {},
): Promise<TestUser> {
  const email = input.email ?? uniqueEmail();
  const password = input.password ?? `pw-${randomBytes(8).toString("hex")}`;
  const client = app.client();
  const data = await client.gqlOk<{ signUp: TestUser["viewer"] }>(
    `mutation SignUp($input: SignUpInput!) { signUp(input: $input) { ${viewerFields} } }`,
    { input: { ...input, email, password } },
  );
  return { client, email, password, viewer: data.signUp };
}

/** Signs in on a new client (or the one given); the client keeps the session. */
export async function signIn(app: TestApp, email: string, password: string, client = app.client()): Promise<TestUser> {
  const data = await client.gqlOk<{ signIn: TestUser["viewer"] }>(
    `mutation SignIn($email: String!, $password: String!) { signIn(email: $email, password: $password) { ${viewerFields} } }`,
    { email, password },
  );
  return { client, email, password, viewer: data.signIn };
}
