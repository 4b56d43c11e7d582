// What an operation's selection guarantees about its answer (renderer/selection.ts), read without the
// graphql parser: the keys a run-time pointer check may hold an answer to, and those it may not.
import { describe, expect, it } from "vitest";
import { pathSegments, pointerSegments } from "../../../renderer/resolve.ts";
import { selectionAtPath, selectionOf, unansweredKey } from "../../../renderer/selection.ts";

const document = `
# A comment { with braces } is not a selection.
query Things($first: Int = 10, $filter: ThingFilter = { tags: ["a", "b"] }) {
  things(first: $first, filter: $filter) {
    edges {
      node {
        id
        title: label
        settings
        owner { name }
        ...ThingExtras
        ... on SpecialThing { special }
        maybe @include(if: false)
      }
    }
  }
}

query Other { other { id } }

fragment ThingExtras on Thing {
  status
  note(format: "say \\"hi\\" }")
  ... @skip(if: true) { skipped }
}
`;

describe("an operation's selection", () => {
  const selection = selectionOf(document, "Things");
  const node = selectionAtPath(selection, "things.edges[].node");

  it("answers with aliases, fragment fields and nested keys; arguments, defaults and strings do not count", () => {
    expect([...(selection?.fields.keys() ?? [])]).toEqual(["things"]);
    expect([...(node?.fields.keys() ?? [])].sort()).toEqual(
      ["id", "maybe", "note", "owner", "settings", "skipped", "special", "status", "title"].sort(),
    );
    expect(node?.fields.get("owner")?.fields.has("name")).toBe(true);
    expect(node?.fields.get("settings")).toBeUndefined();
  });

  it("marks keys under a type condition, @include or @skip as conditional, and no others", () => {
    expect([...(node?.conditional ?? [])].sort()).toEqual(["maybe", "skipped", "special"]);
  });

  it("keeps keys conditional inside a field two type conditions select, unless also selected outside them", () => {
    const union = selectionOf(
      "query U { items { kind ... on A { detail { a shared } } ... on B { detail { b } } detail { shared } } }",
      "U",
    );
    const detail = selectionAtPath(union, "items.detail");
    expect([...(union?.fields.get("items")?.conditional ?? [])]).toEqual([]);
    expect([...(detail?.conditional ?? [])].sort()).toEqual(["a", "b"]);
  });

  it("picks the named operation of a document holding several", () => {
    expect([...(selectionOf(document, "Other")?.fields.keys() ?? [])]).toEqual(["other"]);
    expect(selectionOf(document, "Missing")).toBeUndefined();
  });
});

describe("a key the answer lacks", () => {
  const selection = selectionOf(document, "Things");
  const node = selectionAtPath(selection, "things.edges[].node");
  const row = { id: "1", title: "A", settings: { deep: 1 }, owner: null, status: "ON", note: null };

  it("is named when the pointer reads a key the operation does not select", () => {
    expect(unansweredKey(node, row, pointerSegments("/titel"))).toEqual(["titel"]);
    expect(unansweredKey(selection, { things: { edges: [] } }, pathSegments("things.edgez[].node"))).toEqual([
      "things",
      "edgez",
    ]);
  });

  it("is named inside a selected object, by the keys up to it", () => {
    expect(unansweredKey(node, { ...row, owner: { name: "x" } }, pointerSegments("/owner/nmae"))).toEqual([
      "owner",
      "nmae",
    ]);
  });

  it("is a value, not a fault: null, a null parent, past a list's end, conditional, inside a JSON leaf", () => {
    expect(unansweredKey(node, row, pointerSegments("/title"))).toBeUndefined();
    expect(unansweredKey(node, row, pointerSegments("/note"))).toBeUndefined();
    expect(unansweredKey(node, row, pointerSegments("/owner/name"))).toBeUndefined();
    expect(unansweredKey(node, { ...row, tags: [] }, pointerSegments("/tags/3/name"))).toBeUndefined();
    expect(unansweredKey(node, row, pointerSegments("/special"))).toBeUndefined();
    expect(unansweredKey(node, row, pointerSegments("/maybe"))).toBeUndefined();
    expect(unansweredKey(node, row, pointerSegments("/settings/anything"))).toBeUndefined();
    expect(unansweredKey(selection, { things: { edges: [] } }, pathSegments("things.edges[].node"))).toBeUndefined();
  });

  it("is read from the first item of a list on the way", () => {
    const answer = { things: { edges: [{ node: row }] } };
    expect(unansweredKey(selection, answer, pathSegments("things.edges[].node"))).toBeUndefined();
    expect(unansweredKey(selection, answer, pathSegments("things.edges[].nod"))).toEqual([
      "things",
      "edges",
      "0",
      "nod",
    ]);
  });
});
