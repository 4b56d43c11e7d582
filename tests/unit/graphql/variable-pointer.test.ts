import { buildSchema, type GraphQLScalarType, graphql } from "graphql";
import { describe, expect, it } from "vitest";
import { variablePointer } from "../../../server/graphql/errors.ts";

// A variable its type refuses never reaches a resolver: the pointer comes from graphql-js's own message.
const schema = buildSchema(`
  scalar DateTime
  input Filter { label: String!, tags: [Int!] }
  type Query { items(from: DateTime, filter: Filter): Int }
`);
const dateTime = schema.getType("DateTime") as GraphQLScalarType;
dateTime.parseValue = (value: unknown) => {
  if (typeof value !== "string" || Number.isNaN(Date.parse(value))) throw new TypeError("not a date");
  return value;
};

async function refusedPointers(source: string, variableValues: Record<string, unknown>) {
  const { errors } = await graphql({ schema, source, variableValues });
  return (errors ?? []).map((e) => variablePointer(e.message));
}

describe("variablePointer", () => {
  it.each([
    {
      name: "a scalar variable",
      source: "query($from: DateTime) { items(from: $from) }",
      vars: { from: "x\u0000" },
      pointer: "/from",
    },
    {
      name: "a field of an input variable",
      source: "query($filter: Filter) { items(filter: $filter) }",
      vars: { filter: { label: 5 } },
      pointer: "/filter/label",
    },
    {
      name: "an item of a list in an input variable",
      source: "query($filter: Filter) { items(filter: $filter) }",
      vars: { filter: { label: "a", tags: [1, "x"] } },
      pointer: "/filter/tags/1",
    },
  ])("names $name", async ({ source, vars, pointer }) => {
    expect(await refusedPointers(source, vars)).toEqual([pointer]);
  });

  it("names nothing for an error that is not about a variable", () => {
    expect(variablePointer('Cannot query field "x" on type "Query".')).toBeNull();
  });
});
