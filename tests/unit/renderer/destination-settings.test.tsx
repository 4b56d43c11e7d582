// @vitest-environment jsdom
// A field whose schema depends on another field's value: a stream's destination settings are shown
// with the schema of its destination type (the entity's allOf / if-then, as the inputs declare it),
// as labelled values; secrets only say whether they are set; with no record the settings fall back to JSON.
import { cleanup, render, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { GqlError, type Transport } from "../../../renderer/index.ts";
import { fieldSchema } from "../../../renderer/schema.ts";
import { pickWidget } from "../../../renderer/widgets/registry.ts";
import {
  fixtureTransport,
  installDomStandIns,
  recordedResponses,
  registryFor,
  renderRoute,
  viewerFor,
} from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const registry = registryFor("owner");
const stream = registry.schemas.stream;
const recorded = (recordedResponses.Stream.data as { stream: Record<string, unknown> }).stream;

/** The recorded stream with another destination; every other operation as recorded. */
function withDestination(destination: string, destinationAttributes: Record<string, unknown>): Transport {
  const recordedTransport = fixtureTransport();
  return async (document, variables) => {
    if (/^# operation Stream\n/.test(document)) return { stream: { ...recorded, destination, destinationAttributes } };
    return recordedTransport(document, variables);
  };
}

async function destinationSection(transport: Transport): Promise<HTMLElement> {
  const { container } = render(
    renderRoute(`/streams/${String(recorded.id)}`, { registry, viewer: viewerFor("OWNER"), transport }),
  );
  return waitFor(
    () => {
      const sections = [...container.querySelectorAll<HTMLElement>(".ant-descriptions")];
      const found = sections.find((section) => section.textContent?.includes("Destination settings"));
      if (!found) throw new GqlError("no destination section yet", "INTERNAL");
      return found;
    },
    { timeout: 20_000 },
  );
}

describe("a field's schema chosen by another field's value", () => {
  it("resolves the destination settings' schema from the record's destination type", () => {
    const webhook = fieldSchema(stream, "/destinationAttributes", registry.schemas, { destination: "WEBHOOK" });
    expect(webhook?.title).toBe("Destination settings");
    expect(Object.keys(webhook?.properties ?? {})).toContain("url");
    expect(webhook?.properties?.securityToken?.writeOnly).toBe(true);
    // Properties come with their references followed (the compression enum and its labels).
    expect(webhook?.properties?.compression?.enum).toEqual(["NONE", "GZIP", "BZIP2"]);
    expect(pickWidget(undefined, webhook)).toBe("fields");

    const s3 = fieldSchema(stream, "/destinationAttributes", registry.schemas, { destination: "S3" });
    expect(Object.keys(s3?.properties ?? {})).toEqual(expect.arrayContaining(["bucket", "secretKey"]));
    expect(s3?.properties?.url).toBeUndefined();
    expect(
      fieldSchema(stream, "/destinationAttributes/functionID", registry.schemas, { destination: "FUNCTION" })?.title,
    ).toBe("Function");

    // Every destination type has a branch, those not deliverable yet included; no record: the plain object, as JSON.
    for (const [destination, field] of [
      ["KAFKA", "brokers"],
      ["MONGO", "collection"],
      ["MYSQL", "tableName"],
      ["REDIS", "key"],
    ] as const) {
      const settings = fieldSchema(stream, "/destinationAttributes", registry.schemas, { destination });
      expect(Object.keys(settings?.properties ?? {}), destination).toContain(field);
      expect(settings?.properties?.password?.writeOnly, destination).toBe(true);
      expect(pickWidget(undefined, settings), destination).toBe("fields");
    }
    const destinationTypes = (stream.$defs as Record<string, { enum?: string[] }>).destinationType.enum ?? [];
    for (const destination of destinationTypes)
      expect(
        fieldSchema(stream, "/destinationAttributes", registry.schemas, { destination })?.properties,
        destination,
      ).toBeDefined();
    expect(pickWidget(undefined, fieldSchema(stream, "/destinationAttributes", registry.schemas))).toBe("json");
  });

  it("shows Kafka and Redis settings by their labels, enum values by theirs, the password only as set", async () => {
    const kafka = await destinationSection(
      withDestination("KAFKA", {
        brokers: "broker-1.example.com:9092",
        topic: "eth.blocks",
        saslMechanism: "SCRAM_SHA_256",
        username: "streams",
        password: "********",
      }),
    );
    await waitFor(() => expect(kafka.querySelector("[data-widget=fields]")).not.toBeNull());
    const kafkaText = kafka.textContent ?? "";
    for (const shown of [
      "Brokers",
      "broker-1.example.com:9092",
      "Topic",
      "eth.blocks",
      "SASL mechanism",
      "SCRAM-SHA-256",
    ])
      expect(kafkaText).toContain(shown);
    expect(kafkaText).not.toContain("SCRAM_SHA_256");
    expect(kafkaText).toContain("(set, write-only)");
    expect(kafkaText).not.toContain("********");
    expect(kafka.querySelector("[data-widget=json]")).toBeNull();
    cleanup();

    const redis = await destinationSection(
      withDestination("REDIS", { host: "cache.example.com", port: 6380, dataStructure: "LIST", key: "blocks" }),
    );
    await waitFor(() => expect(redis.querySelector("[data-widget=fields]")).not.toBeNull());
    const redisText = redis.textContent ?? "";
    for (const shown of ["Host", "cache.example.com", "6380", "Write to", "List (RPUSH)", "Key or channel"])
      expect(redisText).toContain(shown);
    expect(redisText).not.toContain("(set, write-only)");
  }, 60_000);

  it("shows S3 settings as labelled values, the secret key only as set", async () => {
    const section = await destinationSection(
      withDestination("S3", {
        accessKey: "AKIAEXAMPLE",
        secretKey: "********",
        bucket: "chain-data",
        fileCompression: "GZIP",
        objectPrefix: "blocks/",
      }),
    );
    await waitFor(() => expect(section.querySelector("[data-widget=fields]")).not.toBeNull());
    const text = section.textContent ?? "";
    for (const shown of ["Access key", "AKIAEXAMPLE", "Bucket", "chain-data", "Object prefix", "blocks/", "gzip"])
      expect(text).toContain(shown);
    expect(text).toContain("Secret key");
    expect(text).toContain("(set, write-only)");
    expect(text).not.toContain("********");
    expect(section.querySelector("[data-widget=json]")).toBeNull();
  }, 60_000);

  it("never shows a write-only value, even one the service sent in clear, and names open keys", async () => {
    const section = await destinationSection(
      withDestination("WEBHOOK", {
        url: "https://example.com/hook",
        securityToken: "a-token-in-clear",
        headers: { "X-Team": "data" },
        postTimeoutSec: 5432,
      }),
    );
    await waitFor(() => expect(section.querySelector("[data-widget=fields]")).not.toBeNull());
    const text = section.textContent ?? "";
    expect(text).not.toContain("a-token-in-clear");
    expect(text).toContain("X-Team");
    expect(text).toContain("data");
    // A setting's number is a code or a count: no thousands separator.
    expect(text).toContain("5432");
  }, 60_000);

  it("a function destination links its function and leaves its id out of the settings", async () => {
    const functionId = "0b7a4f8e-4a51-4f7e-9a43-2f8f0f9b5a11";
    const section = await destinationSection(withDestination("FUNCTION", { functionID: functionId, maxRetry: 2 }));
    await waitFor(() => expect(section.querySelector("[data-widget=fields]")).not.toBeNull());
    const link = section.querySelector<HTMLAnchorElement>(`a[href="/functions/${functionId}"]`);
    expect(link).not.toBeNull();
    expect(section.querySelector("[data-widget=fields]")?.textContent).not.toContain(functionId);
    expect(section.querySelector("[data-widget=fields]")?.textContent).toContain("Max retries");
  }, 60_000);
});
