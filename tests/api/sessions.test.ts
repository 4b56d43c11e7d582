// Sessions are cached in each process: two services on one database play two processes of one
// deployment. A change through one must hold in the other as soon as PostgreSQL has delivered the
// relay's notification (milliseconds; the other process has the session cached from a request just
// before, and would otherwise trust it for a minute). The change answers only after the notification is
// sent, but its delivery to another process is asynchronous, so the other is asked again for a moment.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { type GqlClient, signIn, signUp, useTwoTestApps } from "../support/api.ts";

const DEMO_PASSWORD = "demo-password-for-tests";

const apps = useTwoTestApps();
const { onSecond } = apps;

const whoAmI = async (client: GqlClient) =>
  (await client.gqlOk<{ viewer: { email: string } | null }>("{ viewer { email } }")).viewer?.email ?? null;

/** How long PostgreSQL may take to deliver a notification to the other process on a loaded machine. */
const DELIVERY_MS = 2000;

/** What `ask` answers once it answers `expected`, or its last answer after DELIVERY_MS. */
async function soon<T>(ask: () => Promise<T>, expected: T): Promise<T> {
  const deadline = Date.now() + DELIVERY_MS;
  let answer = await ask();
  while (answer !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    answer = await ask();
  }
  return answer;
}

describe("a session changed through one process", () => {
  it("is signed out in the other at once", async () => {
    const user = await signUp(apps.first);
    const elsewhere = onSecond(user);
    expect(await whoAmI(elsewhere)).toBe(user.email);
    expect(await whoAmI(elsewhere)).toBe(user.email);

    await user.client.gqlOk("mutation { signOut }");
    expect(await soon(() => whoAmI(elsewhere), null)).toBeNull();
  });

  it("loses other sessions in the other at once when the password changes", async () => {
    const user = await signUp(apps.first);
    const other = await signIn(apps.first, user.email, user.password);
    const elsewhere = onSecond(other);
    expect(await whoAmI(elsewhere)).toBe(user.email);

    const { setPassword } = await user.client.gqlOk<{ setPassword: { success: boolean } }>(
      "mutation($c: String!, $p: String!) { setPassword(currentPassword: $c, password: $p, passwordConfirmation: $p) { success } }",
      { c: user.password, p: "a-new-password-1" },
    );
    expect(setPassword.success).toBe(true);
    expect(await soon(() => whoAmI(elsewhere), null)).toBeNull();
    expect(await whoAmI(onSecond(user))).toBe(user.email);
  });

  it("has its new role in the other at once, both ways", async () => {
    const owner = await signIn(apps.first, "demo@nodeplane.local", DEMO_PASSWORD);
    const member = await signIn(apps.first, "viewer@nodeplane.local", DEMO_PASSWORD);
    const elsewhere = onSecond(member);
    const setRole = (role: string) =>
      owner.client.gqlOk("mutation($u: ID!, $r: String!) { updateUserRole(userId: $u, role: $r) { role } }", {
        u: member.viewer.userId,
        r: role,
      });
    // Needs an admin: the role the session carries decides.
    const adminChange = async () =>
      (
        await elsewhere.gql("mutation($input: UpdateAccountInput!) { updateAccount(input: $input) { id } }", {
          input: { companyName: "Nodeplane Demo" },
        })
      ).errors?.[0]?.extensions?.code ?? "OK";

    expect(await adminChange()).toBe("FORBIDDEN");
    await setRole("ADMIN");
    expect(await soon(adminChange, "OK")).toBe("OK");
    await setRole("VIEWER");
    expect(await soon(adminChange, "FORBIDDEN")).toBe("FORBIDDEN");
  });
});

// The viewer's rows are kept in each process too (account/viewer-model.ts).
describe("the viewer changed through one process", () => {
  const viewerOf = async (client: GqlClient) =>
    (
      await client.gqlOk<{ viewer: { userFullName: string | null; companyName: string | null; userRole: string } }>(
        "{ viewer { userFullName companyName userRole } }",
      )
    ).viewer;

  it("shows its new name and company in the other at once", async () => {
    const user = await signUp(apps.first);
    const elsewhere = onSecond(user);
    expect(await viewerOf(elsewhere)).toMatchObject({ userFullName: null, companyName: null });
    await user.client.gqlOk("mutation($input: UpdateAccountInput!) { updateAccount(input: $input) { id } }", {
      input: { userFullName: "Ada", companyName: "Engines Ltd" },
    });
    const named = async () => JSON.stringify(await viewerOf(elsewhere));
    const expected = JSON.stringify({ userFullName: "Ada", companyName: "Engines Ltd", userRole: "OWNER" });
    expect(await soon(named, expected)).toBe(expected);
  });

  it("shows a verified address in the other once the link is opened", async () => {
    const user = await signUp(apps.first);
    const elsewhere = onSecond(user);
    const verified = async () =>
      (await elsewhere.gqlOk<{ viewer: { isVerified: boolean } }>("{ viewer { isVerified } }")).viewer.isVerified;
    expect(await verified()).toBe(false);
    const db = new pg.Client({ connectionString: apps.first.database.url });
    await db.connect();
    const { rows } = await db.query<{ body: string }>('SELECT body FROM mail_outbox WHERE "to" = $1', [user.email]);
    await db.end();
    const token = /token=([\w-]+)/.exec(rows[0]?.body ?? "")?.[1] ?? "";
    const answer = await user.client
      .fresh()
      .gqlOk<{ verifyEmail: { success: boolean } }>("mutation($t: String!) { verifyEmail(token: $t) { success } }", {
        t: token,
      });
    expect(answer.verifyEmail.success).toBe(true);
    expect(await soon(verified, true)).toBe(true);
  });
});
