// Sign-ups per client address (NODEPLANE_SIGNUPS_PER_HOUR): new accounts past the limit are refused,
// whatever the client names in X-Forwarded-For, in every process of one deployment.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGN_UP_ATTEMPTS_PER_ACCOUNT } from "../../server/domains/account/service.ts";
import { type GqlError, startTestApp, type TestApp, uniqueEmail } from "../support/api.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

const LIMIT = 3;
const limitEnv = { NODEPLANE_SIGNUPS_PER_HOUR: String(LIMIT) };
const REFUSED = /^Too many new accounts from this address\. Try again in \d+ minutes?\.$/;

interface Answer {
  email: string | null;
  error: GqlError | null;
}

/** One sign-up, sent with these headers (a client's own X-Forwarded-For, or a proxy's). */
async function signUpWith(
  serviceUrl: string,
  headers: Record<string, string> = {},
  input: { email?: string; password?: string } = {},
): Promise<Answer> {
  const response = await fetch(new URL("/graphql", serviceUrl), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({
      query: "mutation($input: SignUpInput!) { signUp(input: $input) { email } }",
      variables: { input: { email: uniqueEmail("signup"), password: "a-long-password", ...input } },
    }),
  });
  const body = (await response.json()) as { data?: { signUp: { email: string } | null }; errors?: GqlError[] };
  return { email: body.data?.signUp?.email ?? null, error: body.errors?.[0] ?? null };
}

const codes = (answers: Answer[]) => answers.map((answer) => answer.error?.extensions?.code ?? "OK");

describe("without a trusted proxy (the default), two service processes on one database", () => {
  let database: TestDatabase;
  let processes: ServiceProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { ...limitEnv, DATABASE_URL: database.url, NODEPLANE_ROLES: "api" };
    // One after the other: the first seeds the new database.
    processes.push(await startServiceProcess(env));
    processes.push(await startServiceProcess(env));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    processes = [];
    await database?.drop();
  });

  it("counts sign-ups from one address in every process, whatever it names in X-Forwarded-For", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const url = processes[i % 2].url;
      answers.push(await signUpWith(url, { "x-forwarded-for": `10.77.0.${i + 1}` }));
    }
    expect(codes(answers)).toEqual([...Array(LIMIT).fill("OK"), "RATE_LIMITED", "RATE_LIMITED"]);
    expect(answers[LIMIT].error?.message).toMatch(REFUSED);
    // The refused attempts made no account: the demo owner, its viewer and LIMIT new owners.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      expect((await db.query("select count(*)::int as n from users")).rows[0].n).toBe(2 + LIMIT);
    } finally {
      await db.end();
    }
  });
});

describe("behind a trusted proxy (NODEPLANE_TRUST_PROXY=127.0.0.1)", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ ...limitEnv, NODEPLANE_TRUST_PROXY: "127.0.0.1" });
  });
  afterAll(async () => {
    await app?.close();
  });
  /** A request the proxy forwards for `client`, which itself sent `forged` (the proxy appends what it saw). */
  const via = (client: string, forged?: string) => ({
    "x-forwarded-for": forged ? `${forged}, ${client}` : client,
  });

  it("refuses an address's sign-up past the limit, saying when to try again; another address still can", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i <= LIMIT; i++) answers.push(await signUpWith(app.url, via("198.51.100.1")));
    expect(codes(answers)).toEqual([...Array(LIMIT).fill("OK"), "RATE_LIMITED"]);
    expect(answers[LIMIT].error?.message).toMatch(REFUSED);
    expect(answers[LIMIT].error?.message).toMatch(/in (59|60) minutes/);
    expect(codes([await signUpWith(app.url, via("198.51.100.2"))])).toEqual(["OK"]);
  });

  it("lets no more than the limit through when an address signs up many at once", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => signUpWith(app.url, via("198.51.100.7"))));
    expect(codes(answers).sort()).toEqual([...Array(LIMIT).fill("OK"), ...Array(8 - LIMIT).fill("RATE_LIMITED")]);
  });

  it("counts a client under the address its proxy saw, not one it forged", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i <= LIMIT; i++) answers.push(await signUpWith(app.url, via("198.51.100.3", `203.0.113.${i + 1}`)));
    expect(codes(answers)).toEqual([...Array(LIMIT).fill("OK"), "RATE_LIMITED"]);
  });

  it("counts every address of an IPv6 /64 as one client", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i <= LIMIT; i++) answers.push(await signUpWith(app.url, via(`2001:db8:5:6::${i + 1}`)));
    expect(codes(answers)).toEqual([...Array(LIMIT).fill("OK"), "RATE_LIMITED"]);
    expect(codes([await signUpWith(app.url, via("2001:db8:5:7::1"))])).toEqual(["OK"]);
  });

  it("spends no slot on a failed attempt", async () => {
    const client = via("198.51.100.4");
    const taken = await signUpWith(app.url, client);
    const failed = [
      ...(await Promise.all(Array.from({ length: 5 }, () => signUpWith(app.url, client, { password: "short" })))),
      await signUpWith(app.url, client, { email: taken.email ?? "" }),
      await signUpWith(app.url, client, { email: taken.email ?? "" }),
    ];
    expect(codes(failed)).toEqual(Array(7).fill("BAD_USER_INPUT"));
    const made = [];
    for (let i = 1; i < LIMIT; i++) made.push(await signUpWith(app.url, client));
    expect(codes([taken, ...made])).toEqual(Array(LIMIT).fill("OK"));
  });

  it("bounds a flood of failing attempts from one address", async () => {
    const client = via("198.51.100.5");
    const taken = (await signUpWith(app.url, via("198.51.100.6"))).email ?? "";
    const attemptsPerHour = LIMIT * SIGN_UP_ATTEMPTS_PER_ACCOUNT;
    const answers: Answer[] = [];
    for (let i = 0; i < attemptsPerHour + 3; i++) answers.push(await signUpWith(app.url, client, { email: taken }));
    const tally = Object.fromEntries(
      ["BAD_USER_INPUT", "RATE_LIMITED"].map((code) => [code, codes(answers).filter((c) => c === code).length]),
    );
    expect(tally).toEqual({ BAD_USER_INPUT: attemptsPerHour, RATE_LIMITED: 3 });
    const fresh = await signUpWith(app.url, client);
    expect(fresh.error?.extensions?.code).toBe("RATE_LIMITED");
    expect(fresh.error?.message).toMatch(/^Too many sign-up attempts from this address\. Try again in \d+ minutes?\.$/);
  });
});
