import pg from "pg";
import { expect, it } from "vitest";
import { uniqueEmail, useTestApp } from "../support/api.ts";

// No NODEPLANE_TRUST_PROXY: X-Forwarded-For is the client's word, not a proxy's.
const ctx = useTestApp();

it("counts a client's sign-in attempts under its own address whatever it names in X-Forwarded-For", async () => {
  const codes: Record<string, number> = {};
  for (let i = 0; i < 35; i++) {
    const response = await ctx.app.client().request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `10.99.0.${i + 1}` },
      body: JSON.stringify({
        query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
        variables: { e: uniqueEmail("guess"), p: "wrong-password" },
      }),
    });
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
    const code = body.errors?.[0]?.extensions?.code ?? "OK";
    codes[code] = (codes[code] ?? 0) + 1;
  }
  // Every attempt is checked (an address is paced past 30 failures, not refused) and counted under the
  // address the request came from, although each named another.
  expect(codes).toEqual({ UNAUTHENTICATED: 35 });
  const db = new pg.Client({ connectionString: ctx.app.database.url });
  await db.connect();
  try {
    const { rows } = await db.query<{ key: string; points: number }>(
      "SELECT key, points FROM sign_in_limits WHERE key LIKE 'address-failures:%'",
    );
    expect(rows).toEqual([{ key: "address-failures:127.0.0.1", points: 35 }]);
  } finally {
    await db.end();
  }
}, 60_000);
