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
  // The address's limit (30 failures) holds although every attempt named another address.
  expect(codes).toEqual({ UNAUTHENTICATED: 30, RATE_LIMITED: 5 });
}, 60_000);
