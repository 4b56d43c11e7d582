// The REST API's operation contracts (schemas/rest/*.rest.json): each names an HTTP method and path, the
// GraphQL operation it runs (in the contract's .graphql document), where its body and answer are, and the
// entity schema describing them. The REST plugin serves them and scripts/generate/openapi.ts describes them;
// both read them here, so a route and its documentation cannot differ.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import {
  type DefinitionNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  parse,
  print,
  type TypeNode,
  type VariableDefinitionNode,
  visit,
} from "graphql";
import type { AccessTokenApplication, EntityInputRef } from "../../schemas/generated/entities.ts";
import { checkOnce } from "../platform/checked-once.ts";

/** Where the REST API is served, and its OpenAPI document. */
export const REST_PREFIX = "/rest/v1";
export const OPENAPI_PATH = `${REST_PREFIX}/openapi.json`;

export const restContractsDir = path.resolve(import.meta.dirname, "../../schemas/rest");
/** The selections the screens' documents share: a REST document spreads them too, so each is written once. */
export const sharedFragmentsFile = path.resolve(import.meta.dirname, "../../screens/fragments.graphql");

const fragmentsIn = (definitions: readonly DefinitionNode[]) =>
  new Map(
    definitions
      .filter((d: DefinitionNode): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Where a list's rows and next cursor are in the operation's data, and which variables page it. */
export interface ListShape {
  /** Dotted path to the rows; `[]` maps over an array (`endpoints.edges[].node`). */
  rows: string;
  cursor?: string;
  hasMore?: string;
  /** The variable holding the page size, and the one holding the cursor to start after. */
  size?: string;
  after?: string;
}

export interface OperationContract {
  id: string;
  summary: string;
  method: HttpMethod;
  /** The path under the API's prefix, with `{name}` parameters (each a variable of the operation). */
  path: string;
  /** The GraphQL operation's name in the contract's document. */
  operation: string;
  /** The request body: its entity input schema, and the variable it is (absent: its fields are variables). */
  body?: { schema: EntityInputRef; variable?: string; example?: Record<string, unknown> };
  /** The entity schema describing the answer (or each row of a list). */
  entity?: string;
  /** The field of the operation's data that is the answer: top-level, or a dotted path (`viewer.subscription`). */
  result?: string;
  list?: ListShape;
  /** The success status: 200 unless said (201 for creates, 204 when nothing is answered). */
  status?: 200 | 201 | 204;
  /**
   * A file answered instead of JSON (an invoice's PDF): the service's download of that name, run once the
   * operation answered (its role check and account scope), with the operation's variables.
   */
  download?: { name: string; mediaType: string };
}

export interface ResourceContract {
  tag: string;
  description: string;
  application: AccessTokenApplication;
  document: string;
  operations: OperationContract[];
}

/** An operation made ready to run: its own GraphQL text and its variables' types. */
export interface RestOperation extends OperationContract {
  tag: string;
  application: AccessTokenApplication;
  /** The operation alone, printed: the text the GraphQL executor caches. */
  source: string;
  kind: "query" | "mutation";
  variables: VariableDefinitionNode[];
  pathParams: string[];
}

const pathParamsOf = (routePath: string) => [...routePath.matchAll(/\{([A-Za-z][A-Za-z0-9]*)\}/g)].map((m) => m[1]);

/** The fragments an operation spreads, with those they spread in turn. */
function fragmentsOf(
  definition: OperationDefinitionNode | FragmentDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  found = new Map<string, FragmentDefinitionNode>(),
): Map<string, FragmentDefinitionNode> {
  visit(definition, {
    FragmentSpread(node) {
      const fragment = fragments.get(node.name.value);
      if (!fragment || found.has(node.name.value)) return;
      found.set(node.name.value, fragment);
      fragmentsOf(fragment, fragments, found);
    },
  });
  return found;
}

/** The named type under a variable's list and non-null wrappers. */
export function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

/** Whether a caller must give the variable: non-null and without a default. */
export const isRequiredVariable = (variable: VariableDefinitionNode) =>
  variable.type.kind === Kind.NON_NULL_TYPE && variable.defaultValue === undefined;

/**
 * Every REST operation, in the contracts' order, each with the fragments it spreads: its document's own
 * and the screens' shared ones. Throws naming the contract and operation when one names
 * an operation its document lacks or a path parameter that is not a variable: the service refuses to
 * start and the generator to write.
 */
export function loadRestOperations(dir = restContractsDir, sharedFile = sharedFragmentsFile): RestOperation[] {
  const operations: RestOperation[] = [];
  const shared = fragmentsIn(parse(readFileSync(sharedFile, "utf8")).definitions);
  const contracts = readdirSync(dir)
    .filter((f) => f.endsWith(".rest.json"))
    .sort()
    .map((file) => ({ file, contract: JSON.parse(readFileSync(path.join(dir, file), "utf8")) as unknown }));
  const check = () => {
    for (const { file, contract } of contracts) checkContract(file, contract);
  };
  // The checkout's contracts are checked once for the same bytes (checkOnce: ~0.1 s of ajv at each start).
  if (dir === restContractsDir) checkOnce(path.resolve(restContractsDir, "../.."), "REST contracts", check);
  else check();
  for (const { file, contract: checked } of contracts) {
    const contract = checked as ResourceContract;
    const document = parse(readFileSync(path.join(dir, contract.document), "utf8"));
    const own = fragmentsIn(document.definitions);
    for (const name of own.keys())
      if (shared.has(name))
        throw new Error(`${contract.document}: fragment ${name} is already one of ${path.basename(sharedFile)}'s`);
    const fragments = new Map([...shared, ...own]);
    const definitions = new Map(
      document.definitions
        .filter((d: DefinitionNode): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
        .map((d) => [d.name?.value ?? "", d]),
    );
    for (const declared of contract.operations) {
      const definition = definitions.get(declared.operation);
      if (!definition)
        throw new Error(`${file}: ${declared.id} names ${declared.operation}, not in ${contract.document}`);
      if (definition.operation === "subscription") throw new Error(`${file}: ${declared.id} is a subscription`);
      const variables = [...(definition.variableDefinitions ?? [])];
      const pathParams = pathParamsOf(declared.path);
      const known = new Set(variables.map((v) => v.variable.name.value));
      const bodyVariable = declared.body?.variable;
      for (const param of pathParams)
        if (!known.has(param) && !bodyVariable)
          throw new Error(`${file}: ${declared.id}'s path parameter ${param} is no variable of ${declared.operation}`);
      operations.push({
        ...declared,
        tag: contract.tag,
        application: contract.application,
        source: print({
          kind: Kind.DOCUMENT,
          definitions: [definition, ...fragmentsOf(definition, fragments).values()],
        }),
        kind: definition.operation,
        variables,
        pathParams,
      });
    }
  }
  return operations;
}

/** The resource contracts themselves (tag and description), for the document's tags. */
export function loadRestResources(dir = restContractsDir): ResourceContract[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".rest.json"))
    .sort()
    .map((file) => readContract(dir, file));
}

/** One contract file, checked (checkContract). */
function readContract(dir: string, file: string): ResourceContract {
  const contract = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as unknown;
  checkContract(file, contract);
  return contract as ResourceContract;
}

let contractSchema: ValidateFunction | undefined;

/** A contract checked against schemas/rest.schema.json (a wrong key fails loudly, naming it). */
function checkContract(file: string, contract: unknown): void {
  contractSchema ??= new Ajv2020({ allErrors: true }).compile(
    JSON.parse(readFileSync(path.resolve(restContractsDir, "../rest.schema.json"), "utf8")),
  );
  if (!contractSchema(contract))
    throw new Error(
      `${file}: ${(contractSchema.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ")}`,
    );
}

/** The value at a dotted path, `[]` mapping over arrays (`edges[].node`). */
export function valueAt(data: unknown, dotted: string): unknown {
  let values: unknown[] = [data];
  let spread = false;
  for (const part of dotted.split(".")) {
    const name = part.endsWith("[]") ? part.slice(0, -2) : part;
    values = values.flatMap((value) => {
      const next = (value as Record<string, unknown> | null)?.[name];
      return part.endsWith("[]") && Array.isArray(next) ? next : [next];
    });
    spread ||= part.endsWith("[]");
  }
  return spread ? values : values[0];
}
