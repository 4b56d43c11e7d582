import { describe, expect, it } from "vitest";
import { signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();

describe("the GraphQL endpoint", () => {
  it("refuses requests that are not JSON posts (CSRF)", async () => {
    const client = ctx.app.client();
    const get = await client.request("/graphql?query=%7Bviewer%7Bid%7D%7D");
    expect(get.status).toBe(405);
    const form = await client.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "query=mutation%7BsignOut%7D",
    });
    expect(form.status).toBe(415);
  });

  it("refuses them at every spelling of its path the router takes for /graphql (percent-encoded letters)", async () => {
    const user = await signUp(ctx.app);
    for (const path of ["/%67raphql", "/graph%71l", "/%67%72%61%70%68%71%6C"]) {
      const get = await user.client.request(`${path}?query=%7Bviewer%7Bemail%7D%7D`);
      expect({ path, status: get.status }).toEqual({ path, status: 405 });
      expect(await get.text()).not.toContain(user.email);
      const form = await user.client.request(path, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ query: "mutation { signOut }" }),
      });
      expect({ path, status: form.status }).toEqual({ path, status: 415 });
    }
    expect((await user.client.gql("{ viewer { email } }")).data).toEqual({ viewer: { email: user.email } });
  });

  it("limits depth, aliases and tokens with a stable code", async () => {
    const user = await signUp(ctx.app);
    const deep = `{ viewer { subscription { plan { id } } } ${"team { userId } ".repeat(1)} }`;
    expect((await user.client.gql(deep)).errors).toBeUndefined();
    const aliases = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: viewer { id }`).join(" ")} }`;
    const tooManyAliases = await user.client.gql(aliases);
    expect(tooManyAliases.status).toBe(400);
    expect(tooManyAliases.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const tokens = `{ viewer { ${"id ".repeat(3000)} } }`;
    expect((await user.client.gql(tokens)).errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    // Refused before parsing: a cold parser overflows its stack a few thousand levels down. Signed in too,
    // where the response cache is asked first, twice for a text that reads only a snapshot.
    for (const depth of [65, 5000]) {
      const deep = `${"[".repeat(depth)}1${"]".repeat(depth)}`;
      const snapshotOnly = `{ endpoints(first: 5, search: ${deep}) { totalCount } }`;
      const sent = [
        [ctx.app.client(), `{ __typename(a: ${deep}) }`],
        [user.client, `{ __typename(a: ${deep}) }`],
        [user.client, snapshotOnly],
        [user.client, snapshotOnly],
      ] as const;
      for (const [client, text] of sent) {
        const nested = await client.gql(text);
        expect(nested.status).toBe(400);
        expect(nested.errors?.[0]).toMatchObject({
          message: "The query nests brackets more than 64 levels deep.",
          extensions: { code: "BAD_USER_INPUT" },
        });
      }
    }
    // Brackets in strings, block strings and comments are text, not nesting.
    const quoted = await user.client.gql(
      `# ${"{".repeat(100)}\n{ viewer { id } } query Q($s: String = "${"[".repeat(100)}\\"", $t: String = """${"(".repeat(100)}""") { viewer { id } }`,
    );
    expect(quoted.errors?.[0]?.message ?? "").not.toMatch(/nests brackets/);
    const unknown = await user.client.gql("{ viewr { id } }");
    expect(unknown.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
  });

  it("refuses a body with a __proto__ or constructor.prototype key, saying why, in GraphQL's shape", async () => {
    const client = ctx.app.client();
    const query = "query($v: JSON) { __typename }";
    for (const variables of ['{"__proto__":{}}', '{"v":{"a":{"constructor":{"prototype":{"x":1}}}}}']) {
      const answer = await client.request("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
      });
      expect(answer.status, variables).toBe(400);
      expect(await answer.json()).toEqual({
        data: null,
        errors: [
          {
            message:
              'The body is not accepted: JSON objects may not have a "__proto__" or "constructor.prototype" key.',
            extensions: { code: "BAD_USER_INPUT" },
          },
        ],
      });
    }
    // Malformed JSON is still answered as such.
    const broken = await client.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"query":',
    });
    expect(broken.status).toBe(400);
    expect((await broken.json()).errors?.[0].message).toMatch(/not valid JSON/);
  });

  it("answers UNAUTHENTICATED without a session", async () => {
    for (const query of [
      "{ team { userId } }",
      "{ endpoints { totalCount } }",
      "{ registry { version } }",
      "{ chains { chain } }",
    ]) {
      const { errors } = await ctx.app.client().gql(query);
      expect(errors?.[0].extensions?.code, query).toBe("UNAUTHENTICATED");
    }
  });
});

const production = useTestApp({ NODE_ENV: "production", NODEPLANE_ALLOWED_HOSTS: "localhost" });

describe("field suggestions in production", () => {
  it("are not offered", async () => {
    const { errors } = await production.app.client().gql("{ viewr { id } }");
    expect(errors?.[0].message).not.toMatch(/Did you mean/);
    expect(errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
  });
});
