import { connect, createServer, type Server, type Socket } from "node:net";
import { type Logger, pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { startStreamEngine } from "../../server/dataplane/engine/index.ts";
import { functionInvoker } from "../../server/domains/functions/invoker.ts";
import { FunctionRuns } from "../../server/domains/functions/service.ts";
import { kvFilterHelpers } from "../../server/domains/kv/filter-helpers.ts";
import { engineStore } from "../../server/domains/streams/engine-store.ts";
import type { TestUser } from "../support/api.ts";
import { testEgress } from "../support/egress.ts";
import {
  blockNumbers,
  NETWORK,
  type StreamsTestApp,
  startReceiver,
  startStreamsAppAsOwner,
  waitFor,
} from "./streams-harness.ts";

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  // No engine in the service: each test runs its own, with its own view of the node's WebSocket.
  ({ t, owner } = await startStreamsAppAsOwner({ engine: false, blocks: 5 }));
});
afterAll(async () => {
  await t?.close();
});

/** The engine's log messages, kept for the assertions on its fallback lines. */
function capturedLog() {
  const messages: string[] = [];
  const log: Logger = pino(
    { level: "info" },
    { write: (line: string) => messages.push(JSON.parse(line).msg as string) },
  );
  return { log, messages };
}

async function engineWithWebSocket(wsUrl: string, tipPollMs: number, log: Logger) {
  return startStreamEngine({
    db: t.db,
    store: engineStore,
    destinationDeps: {
      egress: testEgress,
      functionInvoker: functionInvoker(t.db, new FunctionRuns(kvFilterHelpers(t.db))),
    },
    log,
    config: { dataDir: t.dataDir },
    upstreams: staticUpstreams([{ network: NETWORK, chainId: 1, httpUrl: t.anvil.httpUrl, wsUrl, source: "local" }]),
    leaseTtlMs: 2000,
    pollMs: 50,
    tipPollMs,
    metricsFlushMs: 0,
  });
}

async function streamAtTip(url: string): Promise<string> {
  const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
    "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
    {
      input: {
        name: "at the tip",
        network: NETWORK,
        dataset: "BLOCK",
        destination: "WEBHOOK",
        destinationAttributes: { url },
        startRange: 1,
        datasetBatchSize: 1,
        status: "ACTIVE",
      },
    },
  );
  return createStream.id;
}

const tipNow = async () => Number.parseInt(await t.rpc<string>("eth_blockNumber"), 16);

/** A TCP relay to anvil that can cut every connection and refuse new ones: the node's WebSocket dropping. */
async function relayTo(port: number) {
  const sockets = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) return client.destroy();
    const node = connect(port, "127.0.0.1");
    for (const s of [client, node]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        node.destroy();
      });
    }
    client.pipe(node).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return {
    url: `ws://127.0.0.1:${address.port}`,
    cut() {
      refusing = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      refusing = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("streams at the chain tip", () => {
  it("a new block wakes a stream at the tip at once, not at its next poll", async () => {
    const { log, messages } = capturedLog();
    // A minute between polls: only a pushed head can bring the new block within the wait below.
    const engine = await engineWithWebSocket(t.anvil.wsUrl, 60_000, log);
    const receiver = await startReceiver();
    try {
      const id = await streamAtTip(receiver.url);
      const tip = await tipNow();
      await waitFor("the stream at the tip", async () => receiver.received.length === tip);
      await waitFor("the subscription", async () =>
        messages.some((m) => m.includes("pushed by its node over WebSocket")),
      );
      await t.rpc("evm_mine");
      await waitFor("the new block", async () => receiver.received.length === tip + 1, 5000);
      expect(receiver.received.map((r) => blockNumbers(r.json)[0])).toEqual(
        Array.from({ length: tip + 1 }, (_, i) => i + 1),
      );
      await owner.client.gqlOk("mutation($id: ID!) { deleteStream(id: $id) { success } }", { id });
    } finally {
      await engine.stop();
      await receiver.close();
    }
  });

  it("keeps delivering when the WebSocket drops (polling), and is pushed heads again once it is back", async () => {
    const { log, messages } = capturedLog();
    const relay = await relayTo(Number(new URL(t.anvil.httpUrl).port));
    const engine = await engineWithWebSocket(relay.url, 200, log);
    const receiver = await startReceiver();
    const delivered = () => receiver.received.map((r) => blockNumbers(r.json)[0]);
    try {
      const id = await streamAtTip(receiver.url);
      await waitFor("the subscription", async () =>
        messages.some((m) => m.includes("pushed by its node over WebSocket")),
      );
      await t.rpc("evm_mine");
      let tip = await tipNow();
      await waitFor("the stream at the tip", async () => delivered().at(-1) === tip);

      relay.cut();
      await waitFor("the fallback", async () => messages.some((m) => m.includes("subscription unavailable")));
      for (let i = 0; i < 3; i++) {
        await t.rpc("evm_mine");
        tip = await tipNow();
        await waitFor(`block ${tip} while polling`, async () => delivered().at(-1) === tip);
      }

      relay.restore();
      await waitFor("the subscription back", async () => messages.some((m) => m.includes("subscription back")), 40_000);
      await t.rpc("evm_mine");
      tip = await tipNow();
      await waitFor(`block ${tip} after the subscription is back`, async () => delivered().at(-1) === tip);
      // No gap and nothing twice across the drop and the return.
      expect(delivered()).toEqual(Array.from({ length: tip }, (_, i) => i + 1));
      await owner.client.gqlOk("mutation($id: ID!) { deleteStream(id: $id) { success } }", { id });
    } finally {
      await engine.stop();
      await receiver.close();
      await relay.close();
    }
  });
});
