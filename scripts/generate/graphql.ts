/**
 * GraphQL types, made with GraphQL Code Generator from schemas/api.graphql: the resolver map's types
 * (server/graphql/generated/resolvers.ts, with our context and the rows resolvers return as mappers) and
 * the types of the screens' operations (schemas/generated/operations.ts, from screens/**\/*.graphql),
 * ending with `Operations`, every operation's variables and result by its name: what code that runs an
 * operation by name (the tests' `client.op`) is typed with.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { codegen } from "@graphql-codegen/core";
import * as typescript from "@graphql-codegen/typescript";
import * as typescriptOperations from "@graphql-codegen/typescript-operations";
import * as typescriptResolvers from "@graphql-codegen/typescript-resolvers";
import { type DocumentNode, Kind, parse } from "graphql";
import { apiSdl } from "../../server/graphql/schema.ts";
import { formatGenerated } from "./format.ts";
import { type GeneratedFile, repoRoot } from "./index.ts";
import { withEntityEnums } from "./sdl-enums.ts";

const RESOLVERS = "server/graphql/generated/resolvers.ts";
const OPERATIONS = "schemas/generated/operations.ts";

const scalars = { DateTime: { input: "Date", output: "Date | string" }, JSON: "unknown" };
/** An operation's variables travel as JSON: a DateTime is its ISO text (a Date serializes to it). */
const operationScalars = { ...scalars, DateTime: { input: "Date | string", output: "Date | string" } };

function operationDocuments() {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".graphql")) files.push(full);
    }
  };
  walk(path.join(repoRoot, "screens"));
  return files.map((file) => ({
    location: path.relative(repoRoot, file),
    document: parse(readFileSync(file, "utf8")),
  }));
}

/** What the resolvers of a type's fields get as parent, where that is not the GraphQL type itself. */
const mappers = {
  Viewer: "../../domains/account/resolvers.ts#ViewerView",
  TeamMember: "../../domains/account/resolvers.ts#TeamMemberView",
  Plan: "../../domains/account/resolvers.ts#PlanView",
  Endpoint: "../../domains/endpoints/resolvers.ts#EndpointView",
  Stream: "../../domains/streams/resolvers.ts#StreamView",
  StreamLog: "../../domains/streams/resolvers.ts#StreamLogView",
  StreamDelivery: "../../domains/streams/resolvers.ts#StreamDeliveryView",
  FilterTemplate: "../../domains/streams/resolvers.ts#FilterTemplateView",
  StreamTemplate: "../../domains/streams/resolvers.ts#StreamTemplateView",
  StreamPermissions: "../../domains/streams/resolvers.ts#StreamPermissionsView",
  Webhook: "../../domains/webhooks/resolvers.ts#WebhookView",
  Function: "../../domains/functions/resolvers.ts#FunctionView",
  FunctionActivation: "../../domains/functions/resolvers.ts#ActivationView",
  FunctionPermissions: "../../domains/functions/resolvers.ts#FunctionPermissionsView",
  RateLimiter: "../../domains/ratelimits/resolvers.ts#RateLimiterView",
  RateLimits: "../../domains/ratelimits/resolvers.ts#RateLimitsView",
  Usage: "../../domains/usage/resolvers.ts#UsageView",
  TopEndpoint: "../../domains/usage/resolvers.ts#TopEndpointView",
  BillingSubscription: "../../domains/account/subscription-view.ts#SubscriptionView",
  Invoice: "../../domains/billing/resolvers.ts#InvoiceView",
};

/** `Operations`: each named operation's variables and result, as typescript-operations names their types. */
function operationMap(documents: { document: DocumentNode }[]): string {
  const entries = documents
    .flatMap(({ document }) => document.definitions)
    .flatMap((definition) =>
      definition.kind === Kind.OPERATION_DEFINITION && definition.name
        ? [{ name: definition.name.value, type: definition.operation === "mutation" ? "Mutation" : "Query" }]
        : [],
    )
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(({ name, type }) => `  ${name}: { variables: ${name}${type}Variables; result: ${name}${type} };`);
  return [
    "",
    "/** Every operation of the screens' documents by its name: the variables it takes and the data it answers. */",
    "export interface Operations {",
    ...entries,
    "}",
    "",
    "export type OperationName = keyof Operations;",
    "",
  ].join("\n");
}

export async function generateGraphqlTypes(): Promise<GeneratedFile[]> {
  // The SDL as the enums generator writes it, so one run of `npm run generate` types the enums it wrote.
  const schema = parse(withEntityEnums(apiSdl()));
  const resolvers = await codegen({
    filename: RESOLVERS,
    schema,
    documents: [],
    plugins: [{ typescript: {} }, { typescriptResolvers: {} }],
    pluginMap: { typescript, typescriptResolvers },
    config: {
      scalars,
      useTypeImports: true,
      contextType: "../context.ts#Context",
      makeResolverTypeCallable: true,
      // A parent need not carry the fields its type resolves itself (Endpoint.security, Viewer fields).
      defaultMapper: "Partial<{T}>",
      mappers,
      enumsAsTypes: true,
    },
  });
  const documents = operationDocuments();
  const operations = await codegen({
    filename: OPERATIONS,
    schema,
    documents,
    plugins: [{ typescriptOperations: {} }],
    pluginMap: { typescriptOperations },
    config: { scalars: operationScalars, useTypeImports: true, enumsAsTypes: true },
  });
  return [
    { path: RESOLVERS, content: formatGenerated(RESOLVERS, resolvers, "schemas/api.graphql") },
    {
      path: OPERATIONS,
      content: formatGenerated(
        OPERATIONS,
        operations + operationMap(documents),
        "schemas/api.graphql and screens/**/*.graphql",
      ),
    },
  ];
}
