import { randomUUID } from "node:crypto";
import { type GraphQLArgument, getNamedType, isNonNullType } from "graphql";
import { describe, expect, it } from "vitest";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { encodeCursor } from "../../server/platform/paging.ts";
import { signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();

/** The cursor arguments lists take; every Query field with one is a paged list. */
const CURSOR_ARGUMENTS = ["after", "nextAt"];

const placeholder: Record<string, unknown> = { ID: randomUUID(), String: "x", Int: 10 };

function requiredArguments(args: readonly GraphQLArgument[], cursor: string) {
  return args.filter((arg) => arg.name !== cursor && isNonNullType(arg.type));
}

const pagedLists = Object.values(loadApiSchema().getQueryType()?.getFields() ?? {}).flatMap((field) => {
  const cursor = field.args.find((arg) => CURSOR_ARGUMENTS.includes(arg.name));
  return cursor ? [{ field, cursor: cursor.name }] : [];
});

const badCursors = {
  "not base64 JSON": "garbage!",
  "JSON that is not a key": Buffer.from('{"t":"2026-01-01T00:00:00Z"}').toString("base64url"),
  "a key of the wrong shape": encodeCursor(["not a date", "not an id", 3]),
};

describe("every paged list", () => {
  it("is found in the schema (endpoints, streams and webhooks with their logs, error logs)", () => {
    expect(pagedLists.map((list) => list.field.name).sort()).toEqual(
      expect.arrayContaining(["endpoints", "errorLogs", "streamLogs", "streams", "webhookLogs", "webhooks"]),
    );
  });

  it.each(pagedLists.map((list) => [list.field.name, list] as const))(
    "%s answers a bad cursor with BAD_USER_INPUT on its argument",
    async (_, { field, cursor }) => {
      const { client } = await signUp(ctx.app);
      const required = requiredArguments(field.args, cursor);
      const declared = [...required, { name: cursor, type: "String" }]
        .map((arg) => `$${arg.name}: ${String(arg.type)}`)
        .join(", ");
      const passed = [...required.map((arg) => arg.name), cursor].map((name) => `${name}: $${name}`).join(", ");
      const query = `query(${declared}) { ${field.name}(${passed}) { __typename } }`;
      for (const [kind, bad] of Object.entries(badCursors)) {
        const variables: Record<string, unknown> = { [cursor]: bad };
        for (const arg of required) variables[arg.name] = placeholder[getNamedType(arg.type).name];
        const { errors } = await client.gql(query, variables);
        expect(errors?.[0]?.extensions, `${field.name} with ${kind}`).toMatchObject({
          code: "BAD_USER_INPUT",
          fields: [{ pointer: `/${cursor}` }],
        });
      }
    },
  );
});
