// Azurite's blob service on loopback with the well-known development account, for the Azure
// destination's tests: one container made, and an account SAS for it.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  BlobServiceClient,
  generateAccountSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { freePort } from "./ports.ts";

export const AZ_ACCOUNT = "devstoreaccount1";
export const AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface Azurite {
  /** `http://127.0.0.1:<port>/devstoreaccount1` */
  endpoint: string;
  /** A client signed with the account key. */
  service: BlobServiceClient;
  /** An account SAS (without the leading `?`) allowing everything on blobs. */
  sas: string;
  stop(): Promise<void>;
}

export async function startAzurite(container: string): Promise<Azurite> {
  const dir = mkdtempSync(join(tmpdir(), "azurite-"));
  const port = await freePort();
  const child: ChildProcess = spawn(
    join(process.cwd(), "node_modules/.bin/azurite-blob"),
    ["--blobHost", "127.0.0.1", "--blobPort", String(port), "--location", dir, "--silent", "--skipApiVersionCheck"],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const endpoint = `http://127.0.0.1:${port}/${AZ_ACCOUNT}`;
  const cred = new StorageSharedKeyCredential(AZ_ACCOUNT, AZ_KEY);
  const service = new BlobServiceClient(endpoint, cred);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await service.getContainerClient(container).createIfNotExists();
      break;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const sas = generateAccountSASQueryParameters(
    {
      expiresOn: new Date(Date.now() + 3600_000),
      permissions: AccountSASPermissions.parse("rwdlac"),
      services: AccountSASServices.parse("b").toString(),
      resourceTypes: AccountSASResourceTypes.parse("sco").toString(),
    },
    cred,
  ).toString();
  return {
    endpoint,
    service,
    sas,
    async stop() {
      // Azurite writes its metadata as it exits: its folder is removed only after it is gone.
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    },
  };
}
