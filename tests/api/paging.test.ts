import { randomUUID } from "node:crypto";
import { type GraphQLArgument, getNamedType, isNonNullType } from "graphql";
import { describe, expect, it } from "vitest";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { encodeCursor, MAX_PAGE_SIZE } from "../../server/platform/paging.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();

/** The cursor arguments lists take; every Query field with one is a paged list. */
const CURSOR_ARGUMENTS = ["after", "nextAt"];
/** The arguments a list's size is asked in. */
const SIZE_ARGUMENTS = ["first", "limit"];

const placeholder: Record<string, unknown> = { ID: randomUUID(), String: "x", Int: 10 };

function requiredArguments(args: readonly GraphQLArgument[], cursor: string) {
  return args.filter((arg) => arg.name !== cursor && isNonNullType(arg.type));
}

const pagedLists = Object.values(loadApiSchema().getQueryType()?.getFields() ?? {}).flatMap((field) => {
  const cursor = field.args.find((arg) => CURSOR_ARGUMENTS.includes(arg.name));
  return cursor ? [{ field, cursor: cursor.name }] : [];
});

/** Every list a caller sizes: the paged lists and the lists that are one page (topEndpoints). */
const sizedLists = Object.values(loadApiSchema().getQueryType()?.getFields() ?? {}).flatMap((field) => {
  const size = field.args.find((arg) => SIZE_ARGUMENTS.includes(arg.name));
  return size && getNamedType(size.type).name === "Int" ? [{ field, size: size.name }] : [];
});

/**
 * A query asking `field` for a list of `size` rows, with placeholders for its other required arguments
 * (`ownId` for its `id`, when the list checks the size only once its owner is found).
 */
function sizedQuery(field: (typeof sizedLists)[number]["field"], size: string, ownId?: string) {
  const required = requiredArguments(field.args, size);
  const sizeArgument = field.args.filter((arg) => arg.name === size);
  const declared = [...required, ...sizeArgument].map((arg) => `$${arg.name}: ${String(arg.type)}`);
  const passed = [...required.map((arg) => arg.name), size].map((name) => `${name}: $${name}`);
  const variables: Record<string, unknown> = {};
  for (const arg of required) variables[arg.name] = placeholder[getNamedType(arg.type).name];
  if (ownId) variables.id = ownId;
  return { query: `query(${declared.join(", ")}) { ${field.name}(${passed.join(", ")}) { __typename } }`, variables };
}

async function createFunction(client: GqlClient): Promise<string> {
  const { createFunction } = await client.gqlOk<{ createFunction: { id: string } }>(
    "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
    { input: { name: "sized", code: "function main(params) { return params; }" } },
  );
  return createFunction.id;
}

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

describe("every sized list", () => {
  it("is found in the schema (the paged lists, by first or limit, and the top endpoints)", () => {
    expect(sizedLists.map((list) => `${list.field.name}(${list.size})`)).toEqual(
      expect.arrayContaining([
        "addressBook(limit)",
        "endpoints(first)",
        "errorLogs(limit)",
        "functionsOverview(limit)",
        "streams(limit)",
        "topEndpoints(limit)",
        "values(first)",
        "webhooks(first)",
      ]),
    );
    const paged = pagedLists.map((list) => list.field.name);
    expect(sizedLists.map((list) => list.field.name)).toEqual(expect.arrayContaining(paged));
  });

  it.each(sizedLists.map((list) => [list.field.name, list] as const))(
    "%s refuses a size below 1 or above the largest page on its argument, and serves the largest",
    async (_, { field, size }) => {
      const { client } = await signUp(ctx.app);
      // A function's lists look their function up before the size (server/domains/functions/service.ts).
      const ownId =
        field.name.startsWith("function") && field.args.some((arg) => arg.name === "id")
          ? await createFunction(client)
          : undefined;
      const { query, variables } = sizedQuery(field, size, ownId);
      for (const bad of [-5, 0, MAX_PAGE_SIZE + 1]) {
        const { errors } = await client.gql(query, { ...variables, [size]: bad });
        expect(errors?.[0]?.extensions, `${field.name}(${size}: ${bad})`).toEqual({
          code: "BAD_USER_INPUT",
          fields: [{ pointer: `/${size}`, message: `Give a page size from 1 to ${MAX_PAGE_SIZE}.` }],
        });
      }
      // A size that is not a whole number never reaches the list: GraphQL's Int refuses it on the argument.
      const { errors: fraction } = await client.gql(query, { ...variables, [size]: 2.5 });
      expect(fraction?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: `/${size}` }] });
      // The largest page is served (or the list's own rule answers: its placeholder id names nothing).
      const { errors } = await client.gql(query, { ...variables, [size]: MAX_PAGE_SIZE });
      expect(errors?.[0]?.extensions?.code ?? "none").not.toBe("BAD_USER_INPUT");
    },
  );
});
