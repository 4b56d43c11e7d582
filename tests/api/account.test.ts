import pg from "pg";
import { describe, expect, it } from "vitest";
import { signIn, signUp, startTestApp, type TestApp, uniqueEmail, useTestApp } from "../support/api.ts";

// The tests name client addresses in X-Forwarded-For, which the service trusts only from a named proxy.
const trustLoopback = { NODEPLANE_TRUST_PROXY: "127.0.0.1,::1" };
const ctx = useTestApp(trustLoopback);
const DEMO_PASSWORD = "demo-password-for-tests";

const viewerQuery = `{ viewer {
  id userId uuid email userFullName userRole isEnterprise isPrimaryUser createdAt isSso isVerified isOnboarded
  onboardingVersion companyName companyId profileImage endpointDiscardingDisabled stripeCustomerId signInMethods
  billingVersion hasRollup stealthMode rewardfulAffiliateId accountAIOptOut isFreeTrial isFreeTrialExpired
  freeTrialDaysRemaining telegramUsername
  configuration { endpointTags { isEnabled } rollups { isEnabled } newDashboard billing4 }
  accountConfiguration { accountRps { isEnabled } }
  subscription { isActive plan { kind prettyName } endpointLimit requestsPerSecond responsesPerMonth }
} }`;

async function count(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(sql, params);
    return Number(result.rows[0].n);
  } finally {
    await client.end();
  }
}

describe("sign-up, sign-in and the viewer", () => {
  it("signs up an owner with a session cookie and every viewer field", async () => {
    const client = ctx.app.client();
    const email = uniqueEmail("owner");
    const response = await client.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: "mutation($input: SignUpInput!) { signUp(input: $input) { email } }",
        variables: { input: { email, password: "a-long-password", fullName: "Ada", companyName: "Acme" } },
      }),
    });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith("np_session="));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);

    const { viewer } = await client.gqlOk<{ viewer: Record<string, unknown> }>(viewerQuery);
    expect(viewer).toMatchObject({
      email,
      userFullName: "Ada",
      companyName: "Acme",
      userRole: "OWNER",
      isPrimaryUser: true,
      isVerified: false,
      signInMethods: ["password"],
      configuration: { endpointTags: { isEnabled: true }, rollups: { isEnabled: false } },
      subscription: { isActive: true, plan: { kind: "B6_FREE" }, endpointLimit: 2 },
    });
    expect(viewer.id).toBe(viewer.companyId);
    expect(Object.values(viewer).every((v) => v !== undefined)).toBe(true);
  });

  it("refuses a bad sign-up, naming each field, and writes nothing", async () => {
    const before = await count(ctx.app.database.url, "select count(*) n from users");
    const { errors } = await ctx.app.client().gql("mutation($input: SignUpInput!) { signUp(input: $input) { id } }", {
      input: { email: "not-an-email", password: "short" },
    });
    expect(errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    expect(errors?.[0].extensions?.fields?.map((f) => f.pointer).sort()).toEqual(["/email", "/password"]);
    expect(await count(ctx.app.database.url, "select count(*) n from users")).toBe(before);
  });

  it("refuses a second account with the same email, whatever its case", async () => {
    const user = await signUp(ctx.app);
    const { errors } = await ctx.app.client().gql("mutation($input: SignUpInput!) { signUp(input: $input) { id } }", {
      input: { email: user.email.toUpperCase(), password: "another-long-password" },
    });
    expect(errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/email" }] });
  });

  it("signs in and out", async () => {
    const user = await signUp(ctx.app);
    const again = await signIn(ctx.app, user.email, user.password);
    expect(again.viewer.email).toBe(user.email);
    await again.client.gqlOk("mutation { signOut }");
    expect((await again.client.gqlOk<{ viewer: null }>("{ viewer { id } }")).viewer).toBeNull();
    const { errors } = await again.client.gql("{ endpoints { totalCount } }");
    expect(errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("slows and then refuses repeated failed sign-ins for one email", async () => {
    const user = await signUp(ctx.app);
    const client = ctx.app.client();
    const attempt = () =>
      client.gql("mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }", {
        e: user.email,
        p: "wrong-password",
      });
    const codes: string[] = [];
    for (let i = 0; i < 9; i++) codes.push(String((await attempt()).errors?.[0].extensions?.code));
    expect(codes.slice(0, 8)).toEqual(Array(8).fill("UNAUTHENTICATED"));
    expect(codes[8]).toBe("RATE_LIMITED");
    // The right password is refused too while the email is locked.
    const { errors } = await client.gql(
      "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      {
        e: user.email,
        p: user.password,
      },
    );
    expect(errors?.[0].extensions?.code).toBe("RATE_LIMITED");
  }, 30_000);

  // Each test its own account and client addresses: they wait on the account's backoff side by side (the
  // attempts' outcomes are counted in one statement each, whatever runs beside them). The test of the
  // address's 10 s bound runs alone, after them: how many of its attempts fit depends on how fast they come.
  describe("under parallel attempts", () => {
    let addresses = 0;
    /** A client address of its own (named in X-Forwarded-For), so tests do not share address counts. */
    const newAddress = () => {
      addresses += 1;
      return `10.16.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
    };
    const attempt = async (email: string, password: string, address: string, app: TestApp = ctx.app) => {
      const response = await app.client().request("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": address },
        body: JSON.stringify({
          query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
          variables: { e: email, p: password },
        }),
      });
      const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
      return body.errors?.[0]?.extensions?.code ?? "OK";
    };
    const tally = (codes: string[]) => {
      const counts: Record<string, number> = {};
      for (const code of codes) counts[code] = (counts[code] ?? 0) + 1;
      return counts;
    };

    it.concurrent("counts every one of 50 parallel wrong passwords and then refuses the right one", async ({
      expect,
    }) => {
      const user = await signUp(ctx.app);
      const address = newAddress();
      const codes = await Promise.all(Array.from({ length: 50 }, () => attempt(user.email, "wrong-password", address)));
      // Eight are checked (and fail); every other attempt is refused unchecked, by the email's or the address's lock.
      expect(tally(codes)).toEqual({ UNAUTHENTICATED: 8, RATE_LIMITED: 42 });
      expect(await attempt(user.email, user.password, newAddress())).toBe("RATE_LIMITED");
    }, 60_000);

    it.concurrent("keeps a burst of 200 attempts from 200 addresses to the email's eight checks", async ({
      expect,
    }) => {
      const user = await signUp(ctx.app);
      const codes = await Promise.all(
        Array.from({ length: 200 }, () => attempt(user.email.toUpperCase(), "wrong-password", newAddress())),
      );
      expect(tally(codes)).toEqual({ UNAUTHENTICATED: 8, RATE_LIMITED: 192 });
      expect(await attempt(user.email, user.password, newAddress())).toBe("RATE_LIMITED");
    }, 60_000);

    it.concurrent("counts attempts made through two service instances on one database together", async ({ expect }) => {
      const other = await startTestApp(trustLoopback, { database: ctx.app.database });
      try {
        const user = await signUp(ctx.app);
        const codes = await Promise.all(
          [ctx.app, other].flatMap((app) =>
            Array.from({ length: 25 }, () => attempt(user.email, "wrong-password", newAddress(), app)),
          ),
        );
        expect(tally(codes)).toEqual({ UNAUTHENTICATED: 8, RATE_LIMITED: 42 });
        expect(await attempt(user.email, user.password, newAddress(), other)).toBe("RATE_LIMITED");
      } finally {
        await other.close();
      }
    }, 60_000);

    it.concurrent("paces one address trying many emails, and never refuses it a right password: an office behind one NAT", async ({
      expect,
    }) => {
      const office = newAddress();
      const colleague = await signUp(ctx.app);
      const codes = await Promise.all(
        Array.from({ length: 40 }, () => attempt(uniqueEmail("guess"), "wrong-password", office)),
      );
      // Past 30 failures the address's attempts wait for slots a second apart; each is still checked.
      expect(tally(codes)).toEqual({ UNAUTHENTICATED: 40 });
      // A colleague who never signed in from here, and whose account was not attacked, signs in.
      expect(await attempt(colleague.email, colleague.password, office)).toBe("OK");
      expect(await attempt(colleague.email, colleague.password, newAddress())).toBe("OK");
    }, 60_000);

    it.concurrent("lets an account's owner in from an address it signed in from before while others have locked it", async ({
      expect,
    }) => {
      const user = await signUp(ctx.app);
      const home = newAddress();
      expect(await attempt(user.email, user.password, home)).toBe("OK");
      const codes = await Promise.all(
        Array.from({ length: 20 }, () => attempt(user.email, "wrong-password", newAddress())),
      );
      expect(tally(codes)).toEqual({ UNAUTHENTICATED: 8, RATE_LIMITED: 12 });
      expect(await attempt(user.email, user.password, newAddress())).toBe("RATE_LIMITED");
      expect(await attempt(user.email, user.password, home)).toBe("OK");
    }, 60_000);

    it.concurrent("locks an account for one address after eight failures from it, known address or not", async ({
      expect,
    }) => {
      const user = await signUp(ctx.app);
      const home = newAddress();
      expect(await attempt(user.email, user.password, home)).toBe("OK");
      const codes = await Promise.all(Array.from({ length: 12 }, () => attempt(user.email, "wrong-password", home)));
      expect(tally(codes)).toEqual({ UNAUTHENTICATED: 8, RATE_LIMITED: 4 });
      expect(await attempt(user.email, user.password, home)).toBe("RATE_LIMITED");
    }, 60_000);

    it("refuses an address's attempts whose slot is more than 10 s away, saying when to try again", async () => {
      const address = newAddress();
      const user = await signUp(ctx.app);
      // 30 unpaced failures, then 30 paced a second apart: parallel, the slots past 10 s are refused.
      const codes = await Promise.all(
        Array.from({ length: 60 }, () => attempt(uniqueEmail("stuffing"), "wrong-password", address)),
      );
      // About 11 of the paced ones fit in 10 s (more when a loaded machine spreads the attempts out).
      const counts = tally(codes);
      expect(counts.UNAUTHENTICATED).toBeGreaterThanOrEqual(40);
      expect(counts.RATE_LIMITED).toBeGreaterThanOrEqual(10);
      expect(counts.UNAUTHENTICATED + counts.RATE_LIMITED).toBe(60);
      // The account is not locked: from another address its right password signs in.
      expect(await attempt(user.email, user.password, newAddress())).toBe("OK");
    }, 60_000);
  });

  it("changes a password only with the current one and a matching confirmation", async () => {
    const user = await signUp(ctx.app);
    const other = await signIn(ctx.app, user.email, user.password);
    const set = (currentPassword: string, password: string, passwordConfirmation: string) =>
      user.client.gqlOk<{ setPassword: { success: boolean; error: string | null } }>(
        "mutation($c: String!, $p: String!, $q: String!) { setPassword(currentPassword: $c, password: $p, passwordConfirmation: $q) { success message error } }",
        { c: currentPassword, p: password, q: passwordConfirmation },
      );
    expect((await set(user.password, "new-password-1", "new-password-2")).setPassword).toMatchObject({
      success: false,
    });
    expect((await set("wrong", "new-password-1", "new-password-1")).setPassword).toMatchObject({ success: false });
    expect((await set(user.password, "new-password-1", "new-password-1")).setPassword).toMatchObject({
      success: true,
      error: null,
    });
    // Other sessions end; the one that changed it goes on.
    expect((await other.client.gqlOk<{ viewer: null }>("{ viewer { id } }")).viewer).toBeNull();
    expect((await user.client.gqlOk<{ viewer: { id: string } }>("{ viewer { id } }")).viewer.id).toBe(user.viewer.id);
    await signIn(ctx.app, user.email, "new-password-1");
    const { errors } = await ctx.app.client().gql('mutation { signIn(email: "x@example.com", password: "y") { id } }');
    expect(errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("counts wrong current passwords with the email's failed sign-ins: a session is no unthrottled password oracle", async () => {
    const user = await signUp(ctx.app);
    const set = (currentPassword: string) =>
      user.client.gql<{ setPassword: { success: boolean } }>(
        "mutation($c: String!, $p: String!) { setPassword(currentPassword: $c, password: $p, passwordConfirmation: $p) { success } }",
        { c: currentPassword, p: "new-password-1" },
      );
    const answers: string[] = [];
    for (let i = 0; i < 9; i++) {
      const r = await set(`wrong-${i}`);
      answers.push(r.errors?.[0].extensions?.code ?? `success ${r.data?.setPassword.success}`);
    }
    expect(answers).toEqual([...Array(8).fill("success false"), "RATE_LIMITED"]);
    // The right password is refused too while the email is locked, here and at sign-in.
    expect((await set(user.password)).errors?.[0].extensions?.code).toBe("RATE_LIMITED");
    const signInAgain = await ctx.app
      .client()
      .gql("mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }", {
        e: user.email,
        p: user.password,
      });
    expect(signInAgain.errors?.[0].extensions?.code).toBe("RATE_LIMITED");
  }, 30_000);

  it("updates the profile", async () => {
    const user = await signUp(ctx.app);
    const data = await user.client.gqlOk<{ updateAccount: Record<string, unknown> }>(
      "mutation($input: UpdateAccountInput!) { updateAccount(input: $input) { userFullName companyName telegramUsername accountAIOptOut } }",
      {
        input: { userFullName: "Grace", companyName: "Hopper Labs", telegramUsername: "@grace", accountAIOptOut: true },
      },
    );
    expect(data.updateAccount).toEqual({
      userFullName: "Grace",
      companyName: "Hopper Labs",
      telegramUsername: "grace",
      accountAIOptOut: true,
    });
  });
});

describe("team and roles", () => {
  it("lists the demo team and lets the owner change a member's role", async () => {
    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const { team } = await owner.client.gqlOk<{ team: { userId: string; email: string; role: string }[] }>(
      "{ team { userId email role isPrimaryUser } }",
    );
    expect(team.map((m) => [m.email, m.role])).toEqual([
      ["demo@nodeplane.local", "OWNER"],
      ["viewer@nodeplane.local", "VIEWER"],
    ]);
    const viewerId = team[1].userId;
    const change = (role: string, client = owner.client, userId = viewerId) =>
      client.gql<{ updateUserRole: { role: string } }>(
        "mutation($u: ID!, $r: String!) { updateUserRole(userId: $u, role: $r) { role } }",
        { u: userId, r: role },
      );
    expect((await change("ADMIN")).data?.updateUserRole.role).toBe("ADMIN");
    expect((await change("VIEWER")).data?.updateUserRole.role).toBe("VIEWER");
    expect((await change("OWNER")).errors?.[0].extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/role" }],
    });
    expect((await change("VIEWER", owner.client, team[0].userId)).errors?.[0].extensions?.code).toBe("CONFLICT");

    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    expect((await change("ADMIN", viewer.client)).errors?.[0].extensions?.code).toBe("FORBIDDEN");

    const stranger = await signUp(ctx.app);
    expect((await change("ADMIN", stranger.client)).errors?.[0].extensions?.code).toBe("NOT_FOUND");
    expect((await change("ADMIN", owner.client, stranger.viewer.userId)).errors?.[0].extensions?.code).toBe(
      "NOT_FOUND",
    );
    expect((await change("ADMIN", owner.client, "not-a-uuid")).errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });

  it("lets a viewer read but change nothing of the account", async () => {
    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    const { endpoints } = await viewer.client.gqlOk<{ endpoints: { edges: { node: { id: string } }[] } }>(
      "{ endpoints { edges { node { id } } } }",
    );
    const id = endpoints.edges[0].node.id;
    const { tags } = await viewer.client.gqlOk<{ tags: { id: string }[] }>("{ tags { id } }");
    const mutations: [string, Record<string, unknown>][] = [
      [
        "mutation($input: UpdateAccountInput!) { updateAccount(input: $input) { id } }",
        { input: { companyName: "Taken over" } },
      ],
      [
        "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
        { input: { chain: "ethereum", network: "ethereum-sepolia" } },
      ],
      ['mutation($id: ID!) { updateEndpointLabel(id: $id, label: "x") { id } }', { id }],
      ["mutation($id: ID!) { toggleEndpointPaused(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { archiveEndpoint(id: $id) { id } }", { id }],
      ['mutation($id: ID!) { addEndpointTag(endpointId: $id, label: "x") { id } }', { id }],
      ["mutation($id: ID!, $t: ID!) { removeEndpointTag(endpointId: $id, tagId: $t) { id } }", { id, t: tags[0].id }],
      ["mutation($t: ID!) { deleteTag(tagId: $t) { success } }", { t: tags[0].id }],
      ['mutation($u: ID!) { updateUserRole(userId: $u, role: "ADMIN") { role } }', { u: viewer.viewer.userId }],
    ];
    for (const [query, variables] of mutations) {
      const { errors } = await viewer.client.gql(query, variables);
      expect(errors?.[0].extensions?.code, query).toBe("FORBIDDEN");
    }
    const { viewer: after } = await viewer.client.gqlOk<{ viewer: { companyName: string } }>(
      "{ viewer { companyName } }",
    );
    expect(after.companyName).toBe("Nodeplane Demo");
  });

  it("lets a viewer change their own name and password, and nothing of the account with them", async () => {
    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    const update = (input: Record<string, unknown>) =>
      viewer.client.gql<{ updateAccount: { userFullName: string; telegramUsername: string } }>(
        "mutation($input: UpdateAccountInput!) { updateAccount(input: $input) { userFullName telegramUsername } }",
        { input },
      );
    expect((await update({ userFullName: "Vera Viewer", telegramUsername: "@vera" })).data?.updateAccount).toEqual({
      userFullName: "Vera Viewer",
      telegramUsername: "vera",
    });
    // An account-wide field in the same change refuses the whole change.
    const mixed = await update({ userFullName: "Not saved", companyName: "Taken over" });
    expect(mixed.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    const { viewer: read } = await viewer.client.gqlOk<{ viewer: { userFullName: string; companyName: string } }>(
      "{ viewer { userFullName companyName } }",
    );
    expect(read).toEqual({ userFullName: "Vera Viewer", companyName: "Nodeplane Demo" });

    const setPassword = (current: string, next: string) =>
      viewer.client.gqlOk<{ setPassword: { success: boolean } }>(
        "mutation($c: String!, $p: String!) { setPassword(currentPassword: $c, password: $p, passwordConfirmation: $p) { success } }",
        { c: current, p: next },
      );
    expect((await setPassword(DEMO_PASSWORD, "viewer-own-password-1")).setPassword.success).toBe(true);
    await signIn(ctx.app, "viewer@nodeplane.local", "viewer-own-password-1");
    // Put back, for the tests that sign in as the demo viewer.
    expect((await setPassword("viewer-own-password-1", DEMO_PASSWORD)).setPassword.success).toBe(true);
  });
});

describe("feature flags", () => {
  it("come from configuration defaults, overridden per account", async () => {
    const user = await signUp(ctx.app);
    const flags = async () =>
      (
        await user.client.gqlOk<{
          viewer: { configuration: { rollups: { isEnabled: boolean }; errorLogs: { isEnabled: boolean } } };
        }>("{ viewer { configuration { rollups { isEnabled } errorLogs { isEnabled } } } }")
      ).viewer.configuration;
    expect(await flags()).toEqual({ rollups: { isEnabled: false }, errorLogs: { isEnabled: true } });
    const db = new pg.Client({ connectionString: ctx.app.database.url });
    await db.connect();
    await db.query(`update accounts set feature_flags = '{"rollups": true, "errorLogs": false}' where id = $1`, [
      user.viewer.id,
    ]);
    await db.end();
    expect(await flags()).toEqual({ rollups: { isEnabled: true }, errorLogs: { isEnabled: false } });
  });
});
