/**
 * GraphQL types, made with GraphQL Code Generator from schemas/api.graphql: the resolver map's types
 * (server/graphql/generated/resolvers.ts, with our context and the rows resolvers return as mappers) and
 * the types of the screens' operations (schemas/generated/operations.ts, from screens/**\/*.graphql).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { codegen } from "@graphql-codegen/core";
import * as typescript from "@graphql-codegen/typescript";
import * as typescriptOperations from "@graphql-codegen/typescript-operations";
import * as typescriptResolvers from "@graphql-codegen/typescript-resolvers";
import { parse } from "graphql";
import { apiSdl } from "../../server/graphql/schema.ts";
import { formatGenerated } from "./format.ts";
import { type GeneratedFile, repoRoot } from "./index.ts";
import { withEntityEnums } from "./sdl-enums.ts";

const RESOLVERS = "server/graphql/generated/resolvers.ts";
const OPERATIONS = "schemas/generated/operations.ts";

const scalars = { DateTime: { input: "Date", output: "Date | string" }, JSON: "unknown" };

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
};

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
  const operations = await codegen({
    filename: OPERATIONS,
    schema,
    documents: operationDocuments(),
    plugins: [{ typescriptOperations: {} }],
    pluginMap: { typescriptOperations },
    config: { scalars, useTypeImports: true, enumsAsTypes: true },
  });
  return [
    { path: RESOLVERS, content: formatGenerated(RESOLVERS, resolvers, "schemas/api.graphql") },
    {
      path: OPERATIONS,
      content: formatGenerated(OPERATIONS, operations, "schemas/api.graphql and screens/**/*.graphql"),
    },
  ];
}
