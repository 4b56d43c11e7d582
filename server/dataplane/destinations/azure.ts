import { randomBytes } from "node:crypto";
import type http from "node:http";
import type https from "node:https";
import type { ContainerClient, RequestPolicyFactory } from "@azure/storage-blob";
import type { EgressPolicy } from "../../platform/egress.ts";
import { assertCompression, encodeObject, errorMessage, isEgressRefusal, objectName } from "./common.ts";
import {
  type AzureAttributes,
  type Compression,
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type FileType,
  type TestResult,
} from "./types.ts";

/**
 * One block blob per batch in the container, named like S3 objects under `blobPrefix`, authorised by
 * the SAS token. test(): reads the container's properties (exists, token accepted), then uploads and
 * deletes a tiny probe blob `<prefix>.nodeplane-probe-<random>` to prove write permission.
 */
let sdk: Promise<typeof import("@azure/storage-blob")> | undefined;

/** The Azure SDK, loaded with the first Azure destination: importing it would cost every start. */
function azureSdk(): Promise<typeof import("@azure/storage-blob")> {
  sdk ??= import("@azure/storage-blob");
  return sdk;
}

export class AzureDestination implements Destination {
  readonly type = "AZURE";
  private readonly containerUrl: string;
  private container: Promise<ContainerClient> | undefined;
  private readonly fileType: FileType;
  private readonly compression: Compression;
  /** The egress policy's agents every request goes through; closed with the destination. */
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(
    private readonly attrs: AzureAttributes,
    private readonly ctx: DestinationContext,
    egress: EgressPolicy,
  ) {
    this.compression = assertCompression(attrs.fileCompression);
    this.fileType = attrs.fileType ?? "JSON";
    if (this.fileType !== "JSON" && this.fileType !== "PARQUET") {
      throw new DestinationError(`unknown file type ${String(this.fileType)}`, { retryable: false });
    }
    if (!/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(attrs.container)) {
      throw new DestinationError(`container name "${attrs.container}" is not a valid Azure container name`, {
        retryable: false,
      });
    }
    const base = (attrs.endpoint ?? `https://${attrs.storageAccount}.blob.core.windows.net`).replace(/\/+$/, "");
    const sas = attrs.sasToken.replace(/^\?/, "");
    this.agents = { http: egress.httpAgent({ keepAlive: true }), https: egress.httpsAgent({ keepAlive: true }) };
    this.containerUrl = `${base}/${attrs.container}?${sas}`;
    if (!URL.canParse(this.containerUrl)) {
      throw new DestinationError(`endpoint "${base}" is not a URL`, { retryable: false });
    }
  }

  private connect(): Promise<ContainerClient> {
    this.container ??= azureSdk().then(({ AnonymousCredential, ContainerClient, newPipeline }) => {
      const pipeline = newPipeline(new AnonymousCredential(), {
        retryOptions: { maxTries: 1, tryTimeoutInMs: 30_000 },
      });
      pipeline.factories.push(throughAgents(this.agents));
      return new ContainerClient(this.containerUrl, pipeline);
    });
    return this.container;
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    const probe = `${this.attrs.blobPrefix ?? ""}.nodeplane-probe-${randomBytes(6).toString("hex")}`;
    try {
      const container = await this.connect();
      await container.getProperties();
      const blob = container.getBlockBlobClient(probe);
      await blob.upload("probe", 5);
      await blob.delete();
      return {
        ok: true,
        message: `container ${this.attrs.container} reachable; wrote and removed a probe blob`,
        durationMs: performance.now() - t,
      };
    } catch (e) {
      return { ok: false, message: `Azure Blob: ${describe(e)}`, durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    const t = performance.now();
    const name = objectName(this.attrs.blobPrefix, batch, this.fileType, this.compression);
    const obj = encodeObject(this.ctx, batch, this.fileType, this.compression);
    try {
      await (await this.connect()).getBlockBlobClient(name).uploadData(obj.body, {
        blobHTTPHeaders: { blobContentType: obj.contentType, blobContentEncoding: obj.contentEncoding },
      });
    } catch (e) {
      const status = (e as { statusCode?: number }).statusCode;
      const retryable = (status === undefined && !isEgressRefusal(e)) || (status ?? 0) >= 500 || status === 429;
      throw new DestinationError(`Azure Blob: ${describe(e)}`, { retryable, status });
    }
    return { bytes: obj.body.length, durationMs: performance.now() - t, detail: `${this.attrs.container}/${name}` };
  }

  async close(): Promise<void> {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/**
 * A pipeline step that sends every request through the egress policy's agents: the endpoint is the
 * tenant's, so connections go only where the policy allows.
 */
function throughAgents(agents: { http: http.Agent; https: https.Agent }): RequestPolicyFactory {
  return {
    create: (next) => ({
      sendRequest: (request) => {
        request.agent = request.url.startsWith("https:") ? agents.https : agents.http;
        return next.sendRequest(request);
      },
    }),
  };
}

function describe(e: unknown): string {
  const status = (e as { statusCode?: number }).statusCode;
  const code = (e as { code?: string }).code;
  // The SDK's messages can quote the request URL, which carries the SAS token: keep the first line only;
  // createDestination redacts the token on top of this.
  const first = errorMessage(e).split("\n")[0];
  if (status === 404) return `container not found (${code ?? first})`;
  if (status === 403) return `access denied: the SAS token lacks a permission or has expired (${code ?? first})`;
  return status ? `${first} (HTTP ${status})` : first;
}
