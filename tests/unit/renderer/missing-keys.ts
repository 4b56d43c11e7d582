// Which keys an operation's selection guarantees that a recorded answer lacks. GraphQL always answers a
// selected field with its key (null when it has no value), so a missing key means the answer was
// recorded from an older document: the recorder drops such an answer and the conformance test
// refuses one.
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  buildSchema,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
} from "graphql";

const schema = buildSchema(readFileSync(path.join(import.meta.dirname, "../../../schemas/api.graphql"), "utf8"));

/** Whether a fragment on `condition` applies to a value of `parent` (or of the `__typename` it names). */
function applies(condition: string | undefined, parent: GraphQLCompositeType, typename: unknown): boolean {
  if (!condition || condition === parent.name) return true;
  const named = schema.getType(condition);
  if (!named || !isCompositeType(named)) return false;
  if (isObjectType(parent)) return isAbstractType(named) && schema.isSubType(named, parent);
  // On a union or interface only the answer's `__typename` tells; without it the fragment is not held against it.
  return typename === condition;
}

/** Dotted paths (`stream.destinationFunctionName`, `items[].id`) operation `name` of `document` selects and `data` lacks. */
export function missingKeys(name: string, document: string, data: unknown): string[] {
  const ast = parse(document);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of ast.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const operation = ast.definitions.find(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION && definition.name?.value === name,
  );
  const root = operation && schema.getRootType(operation.operation);
  const missing = new Set<string>();
  const walk = (selectionSet: SelectionSetNode, type: GraphQLCompositeType, value: unknown, at: string) => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const entry of value) walk(selectionSet, type, entry, `${at}[]`);
      return;
    }
    const object = value as Record<string, unknown>;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const keyAt = at ? `${at}.${key}` : key;
        if (!(key in object)) {
          missing.add(keyAt);
          continue;
        }
        const field = "getFields" in type ? type.getFields()[selection.name.value] : undefined;
        const fieldType = field && getNamedType(field.type);
        if (selection.selectionSet && fieldType && isCompositeType(fieldType))
          walk(selection.selectionSet, fieldType, object[key], keyAt);
        continue;
      }
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
      if (!fragment || !applies(fragment.typeCondition?.name.value, type, object.__typename)) continue;
      const narrowed = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
      walk(fragment.selectionSet, narrowed && isCompositeType(narrowed) ? narrowed : type, object, at);
    }
  };
  if (operation && root) walk(operation.selectionSet, root, data, "");
  return [...missing];
}
