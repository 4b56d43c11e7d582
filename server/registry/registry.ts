import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import {
  type ASTNode,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  type OperationDefinitionNode,
  parse,
  print,
  Source,
  validate,
  visit,
} from "graphql";
import type { Manifest } from "../../schemas/generated/screen.ts";
import { chains } from "../domains/catalogue/networks.ts";
import { type Role, roleAtLeast } from "../platform/roles.ts";
import { addAnnotationKeywords, type EntitySchemas } from "../platform/validation.ts";
import { manifestReferenceProblems } from "./references.ts";
import { lookupSchemaRef, resolveRef } from "./schema-refs.ts";

export interface Problem {
  file: string;
  /** A JSON pointer into a manifest or schema; "" for the whole file or a place given by line. */
  pointer: string;
  reason: string;
  /** Where in a .graphql document, 1-based, when the problem has a place there. */
  line?: number;
  column?: number;
}

/** One problem as a line: `file pointer: reason`, or `file:line:column: reason` in a document. */
export function describeProblem(p: Problem): string {
  if (p.line !== undefined) return `${p.file}:${p.line}:${p.column ?? 1}: ${p.reason}`;
  return `${p.file} ${p.pointer || "/"}: ${p.reason}`;
}

/** A problem in a .graphql document at the place graphql-js names (the first, if several). */
function documentProblem(fallbackFile: string, error: GraphQLError, reason = error.message): Problem {
  const file = error.nodes?.[0]?.loc?.source.name ?? error.source?.name ?? fallbackFile;
  const place = error.locations?.[0];
  return { file, pointer: "", reason, ...(place ? { line: place.line, column: place.column } : {}) };
}

/** The line and column a definition of a document starts at. */
function placeOf(node: ASTNode): { line?: number; column?: number } {
  const token = node.loc?.startToken;
  return token ? { line: token.line, column: token.column } : {};
}

export class RegistryError extends Error {
  constructor(readonly problems: Problem[]) {
    super(`The screen registry is not valid:\n${problems.map((p) => `  ${describeProblem(p)}`).join("\n")}`);
    this.name = "RegistryError";
  }
}

export interface Operation {
  name: string;
  type: "query" | "mutation";
  /** The operation with every fragment it uses, ready to send. */
  text: string;
  file: string;
}

export interface Registry {
  screens: { manifest: Manifest; file: string; operations: string[] }[];
  operations: Map<string, Operation>;
  schemas: EntitySchemas;
}

/** A screen the viewer's role does not open: enough to say so at its address, nothing of its content. */
export interface LockedScreen {
  id: string;
  route: string;
  title: string;
  requires: NonNullable<Manifest["requires"]>;
}

export interface RegistryView {
  version: number;
  screens: Manifest[];
  schemas: EntitySchemas;
  operations: Record<string, string>;
  locked: LockedScreen[];
  /** Names of catalogue values by kind, for fields an entity schema marks `x-catalogue`. */
  catalogue: Record<"network" | "chain", Record<string, string>>;
}

const REGISTRY_VERSION = 1;

const catalogueNames: RegistryView["catalogue"] = {
  network: Object.fromEntries(chains.flatMap((chain) => chain.networks.map((n) => [n.value, n.label]))),
  chain: Object.fromEntries(chains.map((chain) => [chain.chain, chain.label])),
};

function walkFiles(dir: string, suffix: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return walkFiles(full, suffix);
      return name.endsWith(suffix) ? [full] : [];
    });
}

const pointerEscape = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** Calls `visit` on every value in a JSON tree with its JSON pointer. */
function walkJson(
  value: unknown,
  pointer: string,
  fn: (key: string, value: unknown, pointer: string, parent: Record<string, unknown>) => void,
) {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) walkJson(item, `${pointer}/${i}`, fn);
  } else if (value && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      const childPointer = `${pointer}/${pointerEscape(key)}`;
      fn(key, child, childPointer, value as Record<string, unknown>);
      walkJson(child, childPointer, fn);
    }
  }
}

function collectFragmentNames(
  node: DefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  into = new Set<string>(),
) {
  visit(node, {
    FragmentSpread(spread) {
      const name = spread.name.value;
      if (into.has(name)) return;
      into.add(name);
      const fragment = fragments.get(name);
      if (fragment) collectFragmentNames(fragment, fragments, into);
    },
  });
  return into;
}

function schemaTypes(node: Record<string, unknown>): string[] {
  if (Array.isArray(node.enum)) return ["enum"];
  if (node.const !== undefined) return ["const"];
  const type = node.type;
  return (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === "string" && t !== "null");
}

/** Whether a JSON Schema fragment describes values the GraphQL input type accepts. */
function compareTypes(
  schemas: EntitySchemas,
  entity: string,
  rawNode: Record<string, unknown>,
  type: GraphQLInputType,
  where: string,
  problems: string[],
) {
  const resolved = resolveRef(schemas, entity, rawNode);
  if (!resolved) {
    problems.push(`${where}: its $ref does not resolve`);
    return;
  }
  const node = resolved.node;
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    if (!schemaTypes(node).includes("array"))
      problems.push(`${where}: the input is a list but the schema is not an array`);
    else if (node.items && typeof node.items === "object")
      compareTypes(
        schemas,
        resolved.entity,
        node.items as Record<string, unknown>,
        nullable.ofType,
        `${where}[]`,
        problems,
      );
    return;
  }
  if (isInputObjectType(nullable)) {
    if (!schemaTypes(node).includes("object")) {
      problems.push(`${where}: the input is ${nullable.name} but the schema is not an object`);
      return;
    }
    const properties = (node.properties ?? {}) as Record<string, Record<string, unknown>>;
    const required = new Set((node.required ?? []) as string[]);
    const fields = nullable.getFields();
    for (const [name, property] of Object.entries(properties)) {
      const field = fields[name];
      if (!field) problems.push(`${where}/${name}: ${nullable.name} has no field ${name}`);
      else compareTypes(schemas, resolved.entity, property, field.type, `${where}/${name}`, problems);
    }
    for (const field of Object.values(fields)) {
      if (isNonNullType(field.type) && field.defaultValue === undefined && !required.has(field.name)) {
        problems.push(
          `${where}/${field.name}: ${nullable.name}.${field.name} is required but the schema does not require it`,
        );
      }
    }
    return;
  }
  if (isEnumType(nullable)) {
    const allowed = new Set(nullable.getValues().map((v) => v.name));
    const values = (node.enum ?? (node.const !== undefined ? [node.const] : null)) as unknown[] | null;
    if (!values) problems.push(`${where}: the input is the enum ${nullable.name} but the schema has no enum`);
    else
      for (const v of values)
        if (!allowed.has(String(v))) problems.push(`${where}: ${String(v)} is not a value of ${nullable.name}`);
    return;
  }
  if (isScalarType(nullable)) {
    const expected: Record<string, string[]> = {
      String: ["string", "enum", "const"],
      ID: ["string", "enum", "const"],
      DateTime: ["string"],
      Int: ["integer"],
      Float: ["number", "integer"],
      Boolean: ["boolean"],
    };
    const accepted = expected[nullable.name];
    if (!accepted) return;
    const types = schemaTypes(node);
    if (types.length === 0 || !types.every((t) => accepted.includes(t))) {
      problems.push(
        `${where}: the input is ${nullable.name} but the schema allows ${types.join(" or ") || "anything"}`,
      );
    }
  }
}

function checkFormAgainstMutation(
  schemas: EntitySchemas,
  schemaRef: string,
  field: GraphQLField<unknown, unknown>,
  variables: Record<string, unknown>,
): string[] {
  const problems: string[] = [];
  const [entity] = schemaRef.split("#");
  const target = lookupSchemaRef(schemas, schemaRef.includes("#") ? schemaRef : `${schemaRef}#`, entity);
  if (!target) return [`schema ${schemaRef} does not resolve`];
  const form = resolveRef(schemas, target.entity, target.node);
  if (!form) return [`schema ${schemaRef} does not resolve`];
  const properties = (form.node.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((form.node.required ?? []) as string[]);
  for (const [name, value] of Object.entries(variables)) {
    const arg = field.args.find((a) => a.name === name);
    if (!arg) {
      problems.push(`variable ${name} is not an argument of ${field.name}`);
      continue;
    }
    if (value === "$form") compareTypes(schemas, form.entity, form.node, arg.type, `${field.name}(${name})`, problems);
    else if (typeof value === "string" && value.startsWith("$form.")) {
      const property = properties[value.slice("$form.".length)];
      if (!property) problems.push(`${value} is not a field of ${schemaRef}`);
      else {
        compareTypes(schemas, form.entity, property, arg.type, `${field.name}(${name})`, problems);
        if (isNonNullType(arg.type) && !required.has(value.slice("$form.".length))) {
          problems.push(`${field.name}(${name}) is required but ${value} is optional in the schema`);
        }
      }
    }
  }
  for (const arg of field.args) {
    if (isNonNullType(arg.type) && arg.defaultValue === undefined && !(arg.name in variables)) {
      problems.push(`the required argument ${arg.name} of ${field.name} is not given`);
    }
  }
  return problems;
}

/**
 * The meta-schema's errors as a reader needs them: what was found and what is allowed, once per place.
 * A failed oneOf or anyOf is left out, since its branches' own errors say more; the allowed values of
 * several enums at one place (anyOf of enums) are listed together.
 */
function manifestProblems(errors: ErrorObject[], metaSchema: Record<string, unknown>): Omit<Problem, "file">[] {
  const problems = new Map<string, { pointer: string; reason: string }>();
  const allowedAt = new Map<string, unknown[]>();
  for (const error of errors) {
    const pointer = error.instancePath;
    if (error.keyword === "oneOf" || error.keyword === "anyOf") continue;
    if (error.keyword === "enum") {
      const allowed = [...(allowedAt.get(pointer) ?? []), ...(error.params.allowedValues as unknown[])];
      allowedAt.set(pointer, allowed);
      problems.set(`${pointer} enum`, {
        pointer,
        reason: `${JSON.stringify(error.data)} is not one of: ${allowed.join(", ")}`,
      });
      continue;
    }
    let reason = error.message ?? error.keyword;
    if (error.keyword === "const")
      reason = `${JSON.stringify(error.data)} is not ${JSON.stringify(error.params.allowedValue)}`;
    if (error.keyword === "additionalProperties") reason = `${reason} (${String(error.params.additionalProperty)})`;
    if (error.keyword === "discriminator" && error.params.error === "mapping") {
      const tag = String(error.params.tag);
      const allowed = discriminatorValues(error.parentSchema as Record<string, unknown>, tag, metaSchema);
      problems.set(`${pointer} ${tag}`, {
        pointer: `${pointer}/${tag}`,
        reason: `${JSON.stringify(error.params.tagValue)} is not one of: ${allowed.join(", ")}`,
      });
      continue;
    }
    problems.set(`${pointer} ${reason}`, { pointer, reason });
  }
  return [...problems.values()];
}

/** The values a discriminated oneOf accepts for its tag, e.g. every view kind. */
export function discriminatorValues(
  union: Record<string, unknown>,
  tag: string,
  metaSchema: Record<string, unknown>,
): unknown[] {
  const defs = metaSchema.$defs as Record<string, { properties?: Record<string, { const?: unknown }> }>;
  return ((union.oneOf ?? []) as { $ref?: string }[]).map(
    (branch) => defs[(branch.$ref ?? "").replace("#/$defs/", "")]?.properties?.[tag]?.const,
  );
}

const ENTITIES_DIR = "schemas/entities";

/**
 * The entity schemas, each checked: JSON, its `$id` its file name, compiled strictly (an unknown keyword
 * is a typo the service would otherwise ignore, e.g. "requried"), its x-enumLabels naming only values of
 * its enum. Problems name the file and, where it can be found, the pointer.
 */
function checkedEntitySchemas(rootDir: string, problems: Problem[]): { schemas: EntitySchemas; ajv: Ajv2020 } {
  const schemas: EntitySchemas = {};
  const fileOf = (id: string) => `${ENTITIES_DIR}/${id}.schema.json`;
  for (const name of readdirSync(path.join(rootDir, ENTITIES_DIR))
    .filter((entry) => entry.endsWith(".schema.json"))
    .sort()) {
    const id = name.replace(/\.schema\.json$/, "");
    try {
      schemas[id] = JSON.parse(readFileSync(path.join(rootDir, ENTITIES_DIR, name), "utf8")) as Record<string, unknown>;
    } catch (error) {
      problems.push({ file: fileOf(id), pointer: "", reason: `not JSON: ${(error as Error).message}` });
    }
  }
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats.default(ajv);
  addAnnotationKeywords(ajv);
  for (const [id, schema] of Object.entries(schemas)) {
    if (schema.$id !== id)
      problems.push({
        file: fileOf(id),
        pointer: "/$id",
        reason: `the $id must be the file name without .schema.json (${id})`,
      });
    else ajv.addSchema(schema);
    walkJson(schema, "", (key, value, pointer, parent) => {
      if (key !== "x-enumLabels" || !value || typeof value !== "object") return;
      const values = new Set((Array.isArray(parent.enum) ? parent.enum : []).map(String));
      for (const label of Object.keys(value))
        if (!values.has(label))
          problems.push({
            file: fileOf(id),
            pointer: `${pointer}/${pointerEscape(label)}`,
            reason: `labels ${label}, which is not a value of its enum`,
          });
    });
  }
  for (const [id, schema] of Object.entries(schemas)) {
    if (schema.$id !== id) continue;
    try {
      ajv.getSchema(id);
    } catch (error) {
      const message = (error as Error).message;
      problems.push({
        file: fileOf(id),
        pointer: keywordPointer(schema, message),
        reason: `does not compile: ${message}`,
      });
    }
  }
  return { schemas, ajv };
}

/** Where the keyword an ajv strict-mode message names first appears in a schema ("" when it names none). */
function keywordPointer(schema: unknown, message: string): string {
  const keyword = /keyword:? "([^"]+)"/.exec(message)?.[1];
  let found = "";
  if (keyword)
    walkJson(schema, "", (key, _value, pointer) => {
      if (!found && key === keyword) found = pointer;
    });
  return found;
}

const routePattern = (route: string) =>
  new RegExp(`^${route.replace(/:[a-zA-Z]+/g, "[^/]+").replace(/\{[^}]+\}/g, "[^/]+")}$`);

export function loadRegistry(rootDir: string, apiSchema: GraphQLSchema): Registry {
  const problems: Problem[] = [];
  const screensDir = path.join(rootDir, "screens");
  const rel = (file: string) => path.relative(rootDir, file);

  const { schemas, ajv: entityAjv } = checkedEntitySchemas(rootDir, problems);
  /** Whether a schema ref names an entity schema; one that does not compile is reported already. */
  const knownSchema = (ref: string) => {
    try {
      return Boolean(entityAjv.getSchema(ref));
    } catch {
      return true;
    }
  };

  // Operations from every document, and the fragments they share.
  const documents: { file: string; document: DocumentNode }[] = [];
  for (const file of walkFiles(screensDir, ".graphql")) {
    try {
      // The source is named by its path from the root, so every error graphql-js reports says which file.
      documents.push({ file, document: parse(new Source(readFileSync(file, "utf8"), rel(file))) });
    } catch (error) {
      if (error instanceof GraphQLError) problems.push(documentProblem(rel(file), error));
      else problems.push({ file: rel(file), pointer: "", reason: (error as Error).message });
    }
  }
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const { file, document } of documents) {
    for (const def of document.definitions) {
      if (def.kind !== Kind.FRAGMENT_DEFINITION) continue;
      if (fragments.has(def.name.value))
        problems.push({
          file: rel(file),
          pointer: "",
          reason: `fragment ${def.name.value} is defined twice`,
          ...placeOf(def),
        });
      fragments.set(def.name.value, def);
    }
  }
  const operations = new Map<string, Operation>();
  for (const { file, document } of documents) {
    for (const def of document.definitions) {
      if (def.kind !== Kind.OPERATION_DEFINITION) continue;
      const op = def as OperationDefinitionNode;
      if (!op.name) {
        problems.push({ file: rel(file), pointer: "", reason: "every operation needs a name", ...placeOf(op) });
        continue;
      }
      const name = op.name.value;
      if (operations.has(name)) {
        problems.push({
          file: rel(file),
          pointer: "",
          reason: `operation ${name} is also defined in ${operations.get(name)?.file}`,
          ...placeOf(op),
        });
        continue;
      }
      if (op.operation === "subscription") {
        problems.push({
          file: rel(file),
          pointer: "",
          reason: `${name}: subscriptions are not served`,
          ...placeOf(op),
        });
        continue;
      }
      const used = [...collectFragmentNames(op, fragments)];
      const missing = used.filter((f) => !fragments.has(f));
      if (missing.length > 0) {
        problems.push({
          file: rel(file),
          pointer: "",
          reason: `${name} uses undefined fragments ${missing.join(", ")}`,
          ...placeOf(op),
        });
        continue;
      }
      const opDocument: DocumentNode = {
        kind: Kind.DOCUMENT,
        definitions: [op, ...used.map((f) => fragments.get(f) as FragmentDefinitionNode)],
      };
      for (const error of validate(apiSchema, opDocument))
        problems.push(documentProblem(rel(file), error, `${name}: ${error.message}`));
      operations.set(name, { name, type: op.operation, text: print(opDocument), file: rel(file) });
    }
  }

  // Manifests against the meta-schema, then against the operations and entity schemas they name.
  const metaSchema = JSON.parse(readFileSync(path.join(rootDir, "schemas/screen.schema.json"), "utf8"));
  const metaAjv = new Ajv2020({ allErrors: true, strict: false, discriminator: true, verbose: true });
  addFormats.default(metaAjv);
  const validateManifest = metaAjv.compile(metaSchema);
  const screens: Registry["screens"] = [];
  for (const file of walkFiles(screensDir, ".screen.json")) {
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(file, "utf8")) as Manifest;
    } catch (error) {
      problems.push({ file: rel(file), pointer: "", reason: `not JSON: ${(error as Error).message}` });
      continue;
    }
    if (!validateManifest(manifest)) {
      for (const { pointer, reason } of manifestProblems(validateManifest.errors ?? [], metaSchema))
        problems.push({ file: rel(file), pointer, reason });
      continue;
    }
    const used = new Set<string>();
    const mutationType = apiSchema.getMutationType();
    walkJson(manifest, "", (key, value, pointer, parent) => {
      const expectOperation = (name: unknown, type: "query" | "mutation", at: string) => {
        if (typeof name !== "string") return;
        const op = operations.get(name);
        if (!op)
          problems.push({
            file: rel(file),
            pointer: at,
            reason: `names the ${type} ${name}, which no .graphql document in screens/ defines`,
          });
        else if (op.type !== type)
          problems.push({ file: rel(file), pointer: at, reason: `${name} is a ${op.type}, not a ${type}` });
        else used.add(name);
      };
      if (key === "query") expectOperation(value, "query", pointer);
      if (key === "mutation") expectOperation(value, "mutation", pointer);
      if (key === "refresh" && Array.isArray(value))
        for (const [i, name] of value.entries()) expectOperation(name, "query", `${pointer}/${i}`);
      if (key === "schema" && typeof value === "string" && !knownSchema(value)) {
        problems.push({
          file: rel(file),
          pointer,
          reason: `names the schema ${value}, which schemas/entities does not define`,
        });
      }
      // A form (a form view, or an action asking for input) must agree with its mutation's arguments.
      if (key === "mutation" && typeof value === "string") {
        const formSchema =
          typeof parent.schema === "string" ? parent.schema : (parent.form as { schema?: string } | undefined)?.schema;
        const field = mutationType?.getFields()[rootFieldOf(operations.get(value)?.text) ?? ""];
        const op = operations.get(value);
        if (formSchema && field && op) {
          const variables = (parent.variables as Record<string, unknown> | undefined) ?? { input: "$form" };
          // Variables a manifest names are checked with its other references; the default is checked here.
          if (!parent.variables && !operationVariables(op.text).has("input"))
            problems.push({ file: rel(file), pointer, reason: `${value} declares no variable $input` });
          for (const reason of checkFormAgainstMutation(schemas, formSchema, field, mapToArgs(op.text, variables))) {
            problems.push({ file: rel(file), pointer, reason: `${formSchema} does not fit ${value}: ${reason}` });
          }
        }
      }
    });
    for (const { pointer, reason } of manifestReferenceProblems(manifest, apiSchema, operations, {
      schemas,
      known: knownSchema,
    }))
      problems.push({ file: rel(file), pointer, reason });
    screens.push({ manifest, file: rel(file), operations: [...used] });
  }

  // Ids and routes are unique, parents exist, and every screen can be reached.
  const byId = new Map<string, Registry["screens"][number]>();
  const routes = new Map<string, string>();
  for (const screen of screens) {
    const { id, route } = screen.manifest;
    if (byId.has(id))
      problems.push({ file: screen.file, pointer: "/id", reason: `id ${id} is also used by ${byId.get(id)?.file}` });
    if (routes.has(route))
      problems.push({
        file: screen.file,
        pointer: "/route",
        reason: `route ${route} is also used by ${routes.get(route)}`,
      });
    byId.set(id, screen);
    routes.set(route, screen.file);
  }
  const links: string[] = [];
  for (const screen of screens) {
    walkJson(screen.manifest, "", (key, value) => {
      if (["to", "link", "rowLink", "redirect"].includes(key) && typeof value === "string")
        links.push(value.split("?")[0]);
    });
  }
  // Every navigation a manifest declares (an action's `to`, a field's `link`, a list's `rowLink`, a
  // `redirect`) leads to a screen; a `to` elsewhere (a time range's variable) is not one.
  for (const screen of screens) {
    walkJson(screen.manifest, "", (key, value, pointer, parent) => {
      const navigates = key === "to" ? typeof parent.label === "string" : ["link", "rowLink", "redirect"].includes(key);
      if (!navigates || typeof value !== "string") return;
      const target = value.split("?")[0].replace(/\{[^}]+\}/g, "x");
      // A slotted screen is no page (the shell shows it around every page): nothing leads to it.
      const pages = screens.filter((candidate) => !candidate.manifest.slot);
      if (!pages.some((candidate) => routePattern(candidate.manifest.route).test(target)))
        problems.push({ file: screen.file, pointer, reason: `leads to ${value}, which is no screen's route` });
    });
  }
  const reachable = (screen: Registry["screens"][number], seen = new Set<string>()): boolean => {
    const nav = screen.manifest.nav;
    if (!nav || seen.has(screen.manifest.id)) return false;
    seen.add(screen.manifest.id);
    if ("section" in nav) return true;
    const parent = nav.parent ? byId.get(nav.parent) : undefined;
    if (nav.parent && !parent) return false;
    if ("tab" in nav) return parent ? reachable(parent, seen) : false;
    const linked = links.some(
      (link) =>
        routePattern(screen.manifest.route).test(link.replace(/\{[^}]+\}/g, "x")) ||
        routePattern(link).test(screen.manifest.route),
    );
    return linked && (!parent || reachable(parent, seen));
  };
  for (const screen of screens) {
    const nav = screen.manifest.nav;
    const parentId = nav && "parent" in nav ? nav.parent : undefined;
    if (parentId && !byId.has(parentId))
      problems.push({ file: screen.file, pointer: "/nav/parent", reason: `no screen has the id ${parentId}` });
    else if (!screen.manifest.slot && !reachable(screen))
      problems.push({
        file: screen.file,
        pointer: "/nav",
        reason: "no navigation entry, tab or link leads to this screen",
      });
  }

  if (problems.length > 0) throw new RegistryError(problems);
  return { screens, operations, schemas };
}

function rootFieldOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const op = parse(text).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const first = op?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  return first && first.kind === Kind.FIELD ? first.name.value : undefined;
}

function operationVariables(text: string): Set<string> {
  const op = parse(text).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return new Set(op?.variableDefinitions?.map((v) => v.variable.name.value) ?? []);
}

/** Maps manifest variables (operation variables) to the root field's arguments they feed. */
function mapToArgs(text: string, variables: Record<string, unknown>): Record<string, unknown> {
  const op = parse(text).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const field = op?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  const mapped: Record<string, unknown> = {};
  if (!field || field.kind !== Kind.FIELD) return mapped;
  for (const arg of field.arguments ?? []) {
    if (arg.value.kind === Kind.VARIABLE && arg.value.name.value in variables)
      mapped[arg.name.value] = variables[arg.value.name.value];
    else mapped[arg.name.value] = "(literal)";
  }
  return mapped;
}

/** The screens, schemas and operations a viewer with this role and these flags may use. */
export function registryFor(registry: Registry, role: Role, flags: Record<string, boolean>): RegistryView {
  const flagged = registry.screens.filter(({ manifest }) => {
    const flag = manifest.requires?.flag;
    return !flag || flags[flag] === true;
  });
  const opens = ({ manifest }: (typeof flagged)[number]) => roleAtLeast(role, manifest.requires?.role ?? "VIEWER");
  const screens = flagged.filter(opens);
  // A screen behind a feature flag that is off stays unknown; one behind a role says which role it needs.
  const locked = flagged
    .filter((screen) => !opens(screen))
    .map(({ manifest }) => ({
      id: manifest.id,
      route: manifest.route,
      title: manifest.title,
      requires: manifest.requires ?? {},
    }));
  const operations: Record<string, string> = {};
  for (const screen of screens) {
    for (const name of screen.operations) operations[name] = registry.operations.get(name)?.text ?? "";
  }
  return {
    version: REGISTRY_VERSION,
    screens: screens.map((s) => s.manifest),
    schemas: registry.schemas,
    operations,
    locked,
    catalogue: catalogueNames,
  };
}
