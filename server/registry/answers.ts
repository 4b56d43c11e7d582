// What an operation's answer holds: the fields its selection set picks, typed by the SDL, so a manifest's
// paths (`endpoints.edges[].node`), pointers (`/label`) and references (`$row.id`) can be checked before
// any request runs. Pure functions over graphql-js; the registry's checks use them.
import {
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  GraphQLString,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
} from "graphql";

/** One place in an answer: its SDL type and, for an object, the fields the operation selects there. */
export interface AnswerNode {
  type: GraphQLOutputType;
  fields: Map<string, AnswerNode>;
}

/** Where a path or pointer leads, or why it leads nowhere. */
export type Step = { node: AnswerNode } | { reason: string };

/** Scalars whose values are JSON of any shape: a path may go on inside them unchecked. */
const OPEN_SCALARS = new Set(["JSON"]);

function fieldsOf(type: GraphQLCompositeType): Record<string, GraphQLField<unknown, unknown>> {
  return isObjectType(type) || isInterfaceType(type) ? type.getFields() : {};
}

function collect(
  schema: GraphQLSchema,
  parent: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  into: Map<string, AnswerNode>,
) {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      const type = selection.name.value === "__typename" ? GraphQLString : fieldsOf(parent)[selection.name.value]?.type;
      if (!type) continue; // graphql's own validation reports an unknown field
      const node = into.get(key) ?? { type, fields: new Map() };
      into.set(key, node);
      const named = getNamedType(type);
      if (selection.selectionSet && isCompositeType(named))
        collect(schema, named, selection.selectionSet, fragments, node.fields);
    } else {
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
      if (!fragment) continue;
      const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
      if (condition && isCompositeType(condition)) collect(schema, condition, fragment.selectionSet, fragments, into);
    }
  }
}

/** The answer of an operation given as text with the fragments it uses (the registry's `Operation.text`). */
export function answerOf(schema: GraphQLSchema, text: string): AnswerNode | null {
  const document = parse(text);
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    if (definition.kind === Kind.OPERATION_DEFINITION) operation = definition;
  }
  const root = operation?.operation === "mutation" ? schema.getMutationType() : schema.getQueryType();
  if (!operation || !root) return null;
  const fields = new Map<string, AnswerNode>();
  collect(schema, root, operation.selectionSet, fragments, fields);
  return { type: root, fields };
}

const isList = (node: AnswerNode) => isListType(getNullableType(node.type));
const isOpen = (node: AnswerNode) => OPEN_SCALARS.has(getNamedType(node.type).name);
const elementOf = (node: AnswerNode): AnswerNode => ({
  type: (getNullableType(node.type) as { ofType: GraphQLOutputType }).ofType,
  fields: node.fields,
});

/** How a node reads in a reason: its SDL type, e.g. `[Endpoint!]!`. */
export const typeName = (node: AnswerNode) => String(node.type);

/** One step into a node by a key: a field of an object, an index of a list. */
function stepInto(node: AnswerNode, key: string, schemaTypeName: string): Step {
  if (isOpen(node)) return { node };
  if (isList(node)) {
    if (/^\d+$/.test(key)) return { node: elementOf(node) };
    return { reason: `${schemaTypeName} is a list (${typeName(node)}): ${key} is not an index` };
  }
  const named = getNamedType(node.type);
  if (!isCompositeType(named)) return { reason: `${schemaTypeName} is a ${named.name}: it has no field ${key}` };
  const found = node.fields.get(key);
  if (found) return { node: found };
  const selected = [...node.fields.keys()].join(", ");
  if (fieldsOf(named)[key])
    return { reason: `${named.name}.${key} is not selected by the operation (it selects ${selected})` };
  return { reason: `${named.name} has no field ${key} (the operation selects ${selected})` };
}

/**
 * Follows a dotted path as the renderer's getPath reads it: `[]` after a segment maps over a list, so
 * `endpoints.edges[].node` leads to the node of each edge. Returns the node the path ends at (an item's
 * node when it mapped over a list) and whether it mapped.
 */
export function followPath(root: AnswerNode, path: string): Step & { mapped?: boolean } {
  let node = root;
  let mapped = false;
  let at = "the answer";
  for (const raw of path ? path.split(".") : []) {
    const listed = raw.endsWith("[]");
    const key = listed ? raw.slice(0, -2) : raw;
    if (key) {
      const next = stepInto(node, key, at);
      if ("reason" in next) return next;
      node = next.node;
      at = key;
    }
    if (listed) {
      if (isOpen(node)) continue;
      if (!isList(node)) return { reason: `${key} is not a list (${typeName(node)}), so ${raw} maps nothing` };
      node = elementOf(node);
      mapped = true;
    }
  }
  return { node, mapped };
}

/** The node of each row a `rows` path gives: the items of the list it names or maps over. */
export function followRows(root: AnswerNode, path: string): Step {
  const found = followPath(root, path);
  if ("reason" in found) return found;
  if (isList(found.node)) return { node: elementOf(found.node) };
  if (found.mapped || isOpen(found.node)) return { node: found.node };
  return { reason: `it leads to ${typeName(found.node)}, not a list` };
}

/** Follows a JSON pointer (`/a/b/0`, with ~1 and ~0 escapes) as the renderer's getPointer reads it. */
export function followPointer(root: AnswerNode, pointer: string): Step {
  let node = root;
  let at = "the value";
  for (const raw of pointer ? pointer.slice(1).split("/") : []) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const next = stepInto(node, key, at);
    if ("reason" in next) return next;
    node = next.node;
    at = key;
  }
  return { node };
}

/** The node of one item of a list node (or the node itself when it is no list). */
export const itemOf = (node: AnswerNode): AnswerNode => (isList(node) ? elementOf(node) : node);
