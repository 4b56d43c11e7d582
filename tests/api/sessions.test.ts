// Sessions are cached in each process: two services on one database play two processes of one
// deployment. A change through one must hold in the other at its very next request (no waiting), even
// though the other has the session cached from a request just before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GqlClient, signIn, signUp, startTestApp, type TestApp, type TestUser } from "../support/api.ts";

const DEMO_PASSWORD = "demo-password-for-tests";

let first: TestApp;
let second: TestApp;

beforeAll(async () => {
  first = await startTestApp();
  second = await startTestApp({}, { database: first.database });
});

afterAll(async () => {
  await second?.close();
  await first?.close();
});

/** A client of the second service carrying the same session cookie (the same browser, another process). */
function onSecond(user: TestUser): GqlClient {
  const client = new GqlClient(second.url);
  for (const [name, value] of user.client.cookies) client.cookies.set(name, value);
  return client;
}

const whoAmI = async (client: GqlClient) =>
  (await client.gqlOk<{ viewer: { email: string } | null }>("{ viewer { email } }")).viewer?.email ?? null;

describe("a session changed through one process", () => {
  it("is signed out in the other at once", async () => {
    const user = await signUp(first);
    const elsewhere = onSecond(user);
    expect(await whoAmI(elsewhere)).toBe(user.email);
    expect(await whoAmI(elsewhere)).toBe(user.email);

    await user.client.gqlOk("mutation { signOut }");
    expect(await whoAmI(elsewhere)).toBeNull();
  });

  it("loses other sessions in the other at once when the password changes", async () => {
    const user = await signUp(first);
    const other = await signIn(first, user.email, user.password);
    const elsewhere = onSecond(other);
    expect(await whoAmI(elsewhere)).toBe(user.email);

    const { setPassword } = await user.client.gqlOk<{ setPassword: { success: boolean } }>(
      "mutation($c: String!, $p: String!) { setPassword(currentPassword: $c, password: $p, passwordConfirmation: $p) { success } }",
      { c: user.password, p: "a-new-password-1" },
    );
    expect(setPassword.success).toBe(true);
    expect(await whoAmI(elsewhere)).toBeNull();
    expect(await whoAmI(onSecond(user))).toBe(user.email);
  });

  it("has its new role in the other at once, both ways", async () => {
    const owner = await signIn(first, "demo@nodeplane.local", DEMO_PASSWORD);
    const member = await signIn(first, "viewer@nodeplane.local", DEMO_PASSWORD);
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
    expect(await adminChange()).toBe("OK");
    await setRole("VIEWER");
    expect(await adminChange()).toBe("FORBIDDEN");
  });
});
