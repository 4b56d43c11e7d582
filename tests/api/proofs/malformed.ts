/**
 * Malformed values for every argument of an operation, derived from its SDL type and, where a resolver
 * checks the input with an entity schema, from that schema: control characters, numbers beyond safe
 * integers and `1e308`, JSON nested too deep or too large, and each bound, length, pattern, format and
 * type the schema states. Each comes with the JSON pointer the answer must name.
 */
import { type GraphQLInputType, isEnumType, isInputObjectType, isListType, isNonNullType, isScalarType } from "graphql";
import type { Resolvers } from "../../../server/graphql/resolvers.ts";
import { loadEntitySchemas } from "../../../server/platform/validation.ts";
import { inputSchemaOf, type Operation } from "./operations.ts";

type Json = Record<string, unknown>;

export interface Malformed {
  /** What is wrong, e.g. `/input/name: NUL`. */
  label: string;
  args: Json;
  /** The pointer the BAD_USER_INPUT answer must name (it or a pointer below it). */
  pointer: string;
}

const entitySchemas = loadEntitySchemas();

/** A schema node with the root it belongs to, so local `$ref`s resolve. */
interface Node {
  root: string;
  schema: Json;
}

function deref(node: Node): Node {
  let current = node;
  for (let i = 0; i < 10 && typeof current.schema.$ref === "string"; i++) {
    const [file, fragment = ""] = (current.schema.$ref as string).split("#");
    const root = file || current.root;
    let target: unknown = entitySchemas[root];
    for (const part of fragment.split("/").filter(Boolean)) target = (target as Json)[part];
    current = { root, schema: target as Json };
  }
  return current;
}

function schemaAt(ref: string): Node {
  const [root, fragment] = ref.split("#");
  return deref({ root, schema: { $ref: `${root}#${fragment}` } });
}

/** The schemas that apply to property `key` of an object `value` checked by `node` (conditionals included). */
function propertySchemas(node: Node, key: string, value: Json): { schema: Node; condition: string[] }[] {
  const found: { schema: Node; condition: string[] }[] = [];
  const own = (node.schema.properties as Record<string, Json> | undefined)?.[key];
  if (own) found.push({ schema: deref({ root: node.root, schema: own }), condition: [] });
  for (const part of (node.schema.allOf as Json[] | undefined) ?? []) {
    const when = (part.if as Json | undefined)?.properties as Record<string, Json> | undefined;
    const then = (part.then as Json | undefined)?.properties as Record<string, Json> | undefined;
    if (!when || !then?.[key]) continue;
    // The keys that chose this schema; a variant without them (where they may be left out) checks that
    // the rule still holds when they are not sent, as in a partial update.
    const required = (node.schema.required as string[] | undefined) ?? [];
    if (Object.entries(when).every(([k, s]) => s.const === undefined || s.const === value[k]))
      found.push({
        schema: deref({ root: node.root, schema: then[key] }),
        condition: Object.keys(when).filter((k) => !required.includes(k)),
      });
  }
  return found;
}

const types = (s: Json) => (Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : []);

/** A string that does not match `pattern`, from a few that break the patterns schemas use. */
function notMatching(pattern: string): string | undefined {
  const re = new RegExp(pattern, "u");
  return ["file:///etc/passwd", "a\r\nb", "with space", "ünïcode", ""].find((s) => !re.test(s));
}

/** Values that break what one schema node states about a value; `gqlType` limits them to what the SDL can carry. */
function schemaViolations(s: Json, gqlType: string): { what: string; value: unknown }[] {
  const out: { what: string; value: unknown }[] = [];
  const t = types(s);
  const json = gqlType === "JSON";
  if (t.includes("string") && (gqlType === "String" || json)) {
    if (typeof s.maxLength === "number" && s.maxLength < 100_000)
      out.push({ what: `longer than ${s.maxLength}`, value: "x".repeat(s.maxLength + 1) });
    if (typeof s.minLength === "number" && s.minLength > 0) out.push({ what: "empty", value: "" });
    if (typeof s.pattern === "string") {
      const bad = notMatching(s.pattern);
      if (bad !== undefined) out.push({ what: `not matching ${s.pattern}`, value: bad });
    }
    if (s.format === "uri") out.push({ what: "not a URI", value: "not a uri" });
    if (s.format === "email") out.push({ what: "not an e-mail", value: "not-an-email" });
    if (Array.isArray(s.enum)) out.push({ what: "not one of the values", value: "NOT_ONE_OF_THEM" });
    if (json) out.push({ what: "a number for a string", value: 1 });
  }
  const numeric = t.includes("integer") || t.includes("number");
  if (numeric && (gqlType === "Int" || gqlType === "Float" || json)) {
    const int32 = (n: number) => gqlType !== "Int" || (n >= -(2 ** 31) && n < 2 ** 31);
    if (typeof s.minimum === "number" && int32(s.minimum - 1))
      out.push({ what: `below ${s.minimum}`, value: s.minimum - 1 });
    if (typeof s.maximum === "number" && Number.isSafeInteger(s.maximum + 1) && int32(s.maximum + 1))
      out.push({ what: `above ${s.maximum}`, value: s.maximum + 1 });
    if (t.includes("integer") && !t.includes("number") && gqlType !== "Int")
      out.push({ what: "a fraction", value: 1.5 });
    if (json) out.push({ what: "a string for a number", value: "1" });
  }
  if (json && t.includes("object") && !t.includes("string")) out.push({ what: "a string for an object", value: "x" });
  return out;
}

/**
 * Stands for a JSON value nested 5,000 arrays deep, spliced into the request body as text (`withDeepJson`):
 * JSON.stringify of the value itself overflows the test's own stack.
 */
export const DEEP_JSON = "@@proof: nested 5000 deep@@";
const DEEP_JSON_TEXT = `${"[".repeat(5000)}1${"]".repeat(5000)}`;

export const withDeepJson = (body: string) => body.split(JSON.stringify(DEEP_JSON)).join(DEEP_JSON_TEXT);

/** What every value of an SDL scalar gets, whatever its schema. */
function genericViolations(scalar: string): { what: string; value: unknown }[] {
  switch (scalar) {
    case "String":
    case "ID":
    case "DateTime":
      return [
        { what: "NUL", value: "a\u0000b" },
        { what: "a control character", value: "a\u0008b" },
        { what: "an unpaired surrogate", value: "a\ud800b" },
      ];
    case "Float":
      return [
        { what: "above 2^53", value: 2 ** 53 + 2 },
        { what: "1e308", value: 1e308 },
      ];
    case "JSON":
      return [
        { what: "nested 5000 deep", value: DEEP_JSON },
        { what: "20,000 values", value: new Array(20_000).fill(0) },
        { what: "NUL inside", value: { proof: "a\u0000b" } },
        { what: "an unpaired surrogate in a key inside", value: { "\udc00": 1 } },
        { what: "above 2^53 inside", value: { proof: 2 ** 53 + 2 } },
      ];
    default:
      return [];
  }
}

/**
 * What a value means by its name, beyond its type and schema: a network must be in the catalogue and a
 * block must exist, and saying otherwise is the caller's mistake, not an upstream failure.
 */
const NAMED_VIOLATIONS: Record<string, { what: string; value: unknown }[]> = {
  network: [{ what: "not in the catalogue", value: "no-such-network" }],
  blockNumber: [{ what: "far beyond the chain's tip", value: 2 ** 52 }],
  paramsJson: [{ what: "JSON text nested 5000 deep", value: `${"[".repeat(5000)}1${"]".repeat(5000)}` }],
};

const pointerOf = (path: string[]) => `/${path.join("/")}`;

function setAt(args: Json, path: string[], value: unknown): Json {
  const copy = structuredClone(args);
  let target = copy;
  for (const part of path.slice(0, -1)) target = target[part] as Json;
  target[path[path.length - 1]] = value;
  return copy;
}

function deleteAt(args: Json, path: string[]): Json {
  const copy = structuredClone(args);
  let target = copy;
  for (const part of path.slice(0, -1)) target = target[part] as Json;
  delete target[path[path.length - 1]];
  return copy;
}

/** Every malformed variant of `baseline` (the operation's valid arguments, optional ones included). */
export function malformedVariants(op: Operation, baseline: Json, resolvers: Resolvers): Malformed[] {
  const rule = inputSchemaOf(op, resolvers);
  const variants: Malformed[] = [];
  // Pointers of the checked value are relative to it: to `input` for the default rule, else to the arguments.
  const pointerFor = (path: string[]) =>
    pointerOf(rule?.base === "input" && path[0] === "input" ? path.slice(1) : path);
  const checkedPath = (path: string[]) =>
    rule?.base === "input" ? (path[0] === "input" ? path.slice(1) : null) : path;
  const add = (path: string[], what: string, value: unknown, args = baseline, pointerPath = path) =>
    variants.push({
      label: `${pointerOf(path)}: ${what}`,
      args: setAt(args, path, value),
      pointer: pointerFor(pointerPath),
    });

  /** The schema nodes that check the value at `path` (none when no schema does). */
  const schemasAt = (path: string[]): { schema: Node; condition: string[]; parent: string[] }[] => {
    const inChecked = rule ? checkedPath(path) : null;
    if (!rule || !inChecked || inChecked.length === 0) return [];
    let current: { schema: Node; condition: string[]; parent: string[] }[] = [
      { schema: schemaAt(rule.ref), condition: [], parent: [] },
    ];
    let value: unknown = rule.base === "input" ? baseline.input : baseline;
    const prefix = rule.base === "input" ? ["input"] : [];
    for (const [i, key] of inChecked.entries()) {
      const parentValue = (value ?? {}) as Json;
      current = current.flatMap((c) =>
        propertySchemas(c.schema, key, parentValue).map((p) => ({
          ...p,
          parent: [...prefix, ...inChecked.slice(0, i)],
        })),
      );
      value = parentValue[key];
    }
    return current;
  };

  const visit = (path: string[], type: GraphQLInputType, value: unknown) => {
    const inner = isNonNullType(type) ? type.ofType : type;
    if (isListType(inner)) {
      if (Array.isArray(value) && value.length > 0) visit([...path, "0"], inner.ofType, value[0]);
      return;
    }
    if (isInputObjectType(inner)) {
      for (const f of Object.values(inner.getFields())) visit([...path, f.name], f.type, (value as Json)?.[f.name]);
      return;
    }
    if (isEnumType(inner) || !isScalarType(inner) || inner.name === "Boolean") return;
    for (const v of genericViolations(inner.name)) add(path, v.what, v.value);
    for (const v of NAMED_VIOLATIONS[path[path.length - 1]] ?? []) add(path, v.what, v.value);
    for (const { schema, condition, parent } of schemasAt(path)) {
      for (const v of schemaViolations(schema.schema, inner.name)) add(path, v.what, v.value);
      if (inner.name === "JSON") jsonProperties(path, schema, condition, parent, value);
    }
  };

  /** Each property a JSON object's schema states, broken one at a time; also sent without the condition that chose the schema. */
  const jsonProperties = (path: string[], node: Node, condition: string[], parent: string[], value: unknown) => {
    const properties = node.schema.properties as Record<string, Json> | undefined;
    if (!properties) return;
    const object = (value && typeof value === "object" ? value : {}) as Json;
    const withoutCondition = condition.length
      ? condition.reduce((args, k) => deleteAt(args, [...parent, k]), baseline)
      : null;
    for (const [key, raw] of Object.entries(properties)) {
      const s = deref({ root: node.root, schema: raw }).schema;
      const broken: { what: string; value: unknown }[] = schemaViolations(s, "JSON");
      const values = s.additionalProperties as Json | undefined;
      if (values && typeof values === "object" && typeof values.pattern === "string") {
        const bad = notMatching(values.pattern);
        if (bad !== undefined) broken.push({ what: `a value not matching ${values.pattern}`, value: { Proof: bad } });
      }
      for (const b of broken) {
        const args = setAt(baseline, path, { ...object, [key]: b.value });
        variants.push({ label: `${pointerOf([...path, key])}: ${b.what}`, args, pointer: pointerFor([...path, key]) });
        if (withoutCondition)
          variants.push({
            label: `${pointerOf([...path, key])}: ${b.what}, without ${condition.join(", ")}`,
            args: setAt(withoutCondition, path, { ...object, [key]: b.value }),
            pointer: pointerFor([...path, key]),
          });
      }
    }
    if (node.schema.additionalProperties === false)
      variants.push({
        label: `${pointerOf([...path, "proofUnknown"])}: not a property of ${node.schema.title ?? "it"}`,
        args: setAt(baseline, path, { ...object, proofUnknown: 1 }),
        pointer: pointerFor([...path, "proofUnknown"]),
      });
  };

  for (const a of op.field.args) if (baseline[a.name] !== undefined) visit([a.name], a.type, baseline[a.name]);
  return variants;
}

/** Whether a pointer the answer named is the one expected or below it. */
export const names = (answered: string, expected: string) =>
  answered === expected || answered.startsWith(expected === "/" ? "/" : `${expected}/`);
