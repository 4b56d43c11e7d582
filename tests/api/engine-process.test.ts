// The stream engine as `npm start` runs it: a supervised child process of the service that runs filters
// on its own thread. User code never runs in the API process; a loop, a memory bomb or a killed engine
// costs a batch, not the service.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MEMORY_OVERHEAD_MIB } from "../../server/dataplane/sandbox/process.ts";
import { signIn, signUp, startTestApp, type TestApp, type TestUser } from "../support/api.ts";
import {
  blockNumbers,
  DEMO_PASSWORD,
  NETWORK,
  startReceiver,
  streamLogMessages,
  streamStatusOf,
  waitFor,
} from "./streams-harness.ts";

const MIB = 1024 * 1024;
/** What a bomb may touch past the watch between two of its looks (20 ms), as in memory-budget.test.ts. */
const WATCH_SLACK_MIB = 64;

let built: TestApp;
let networksDir: string;
let owner: TestUser;
let rpcUrl: string;

async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

/** A service with its engine in a child process, its local node holding 40 blocks, signed in as the owner. */
async function startService() {
  built = await startTestApp({ NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD, NODEPLANE_ENGINE_PROCESS: "child" });
  rpcUrl = built.services.upstreams.get(NETWORK)?.httpUrl as string;
  owner = await signIn(built, "demo@nodeplane.local", DEMO_PASSWORD);
  await rpc("anvil_mine", ["0x28"]);
}

beforeAll(async () => {
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-engine-process-"));
  // The service's own local node (mining only when told), whose address it hands to its engine.
  const networks = join(networksDir, "networks.json");
  writeFileSync(networks, JSON.stringify({ local: { networks: [NETWORK], blockTimeSeconds: 3600 } }));
  // The chain nodes are read from the process's environment (this test file's worker).
  process.env.NODEPLANE_LOCAL_CHAIN = "1";
  process.env.NODEPLANE_NETWORKS_CONFIG = networks;
  await startService();
}, 120_000);

afterAll(async () => {
  await built?.close();
  if (networksDir) rmSync(networksDir, { recursive: true, force: true });
});

async function createActive(url: string, extra: Record<string, unknown>, user = owner): Promise<string> {
  const { createStream } = await user.client.gqlOk<{ createStream: { id: string } }>(
    "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
    {
      input: {
        name: "engine child",
        network: NETWORK,
        dataset: "BLOCK",
        destination: "WEBHOOK",
        destinationAttributes: { url, maxRetry: 0, retryIntervalSec: 0 },
        startRange: 1,
        endRange: 12,
        datasetBatchSize: 3,
        status: "ACTIVE",
        ...extra,
      },
    },
  );
  return createStream.id;
}

const streamOf = (id: string, user = owner) => streamStatusOf(user.client, id);

const pausedWith = async (id: string, user = owner) =>
  waitFor(`stream ${id} paused`, async () => {
    const s = await streamOf(id, user);
    return s.status === "PAUSED" ? s : null;
  });

describe("the stream engine in its own process", () => {
  it("runs in a child process, delivers, and contains a looping filter and a memory bomb to their batches", async () => {
    const engine = await waitFor("the engine child", async () => built.engineChild()?.pid);
    expect(engine).not.toBe(process.pid);
    const receiver = await startReceiver();
    try {
      const created = Date.now();
      const good = await createActive(receiver.url, { filterFunction: "function main(s) { return s.data }" });
      // The activation wakes the child at once (not its 1 s poll).
      await waitFor("first delivery", async () => receiver.received.length > 0);
      expect(Date.now() - created).toBeLessThan(5_000);
      const loop = await createActive(receiver.url, { filterFunction: "function main(s) { for (;;) {} }" });
      const bomb = await createActive(receiver.url, {
        filterFunction: "function main(s) { const a = []; for (;;) a.push(new Array(1e6).fill(a.length)) }",
      });
      await waitFor("good completes", async () => (await streamOf(good)).status === "COMPLETED");
      expect((await pausedWith(loop)).statusReason).toMatch(/filter failed.*Timed out/);
      expect((await pausedWith(bomb)).statusReason).toMatch(/filter failed.*Out of memory/);
      expect(receiver.received.flatMap((r) => blockNumbers(r.json))).toEqual(
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
      // Contained in their isolates: the same engine process ran all three.
      expect(built.engineChild()?.pid).toBe(engine);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it.each([
    // One allocation far past the isolate's limit: isolated-vm's "catastrophic" error names the isolate.
    { how: "V8 lose its isolate", code: "function main(s) { new Array(1e8).fill(0) }" },
    // A builtin V8 cannot interrupt, far past the limit: the thread is held; the engine's watch ends it.
    { how: "hold the engine's thread", code: "function main(s) { new Array(1e9).fill(0) }" },
  ])(
    "a filter that makes $how costs one engine restart; the successor runs that filter alone in the sandbox process, where its stream pauses at its next crash",
    async ({ code }) => {
      const child = built.engineChild();
      const starts = child?.starts as number;
      const receiver = await startReceiver();
      // An account of its own: the account whose filter ended an engine has all its filters run in the
      // sandbox process afterwards (see the next test).
      const attacker = await signUp(built);
      try {
        const crash = await createActive(
          receiver.url,
          {
            filterFunction: code,
            destinationAttributes: { url: receiver.url, maxRetry: 20, retryIntervalSec: 0 },
          },
          attacker,
        );
        await waitFor("a new engine", async () => (child?.starts ?? 0) > starts, 40_000);
        const paused = await pausedWith(crash, attacker);
        expect(paused.statusReason).toMatch(
          /filter failed.*(Out of memory|Timed out).*made the sandbox restart 2 times/,
        );
        // One engine restart, not twenty-one: the successor knew whose filter it was.
        expect(child?.starts).toBe(starts + 1);
        expect(await streamLogMessages(attacker.client, crash)).toContainEqual(
          expect.stringMatching(/^This stream's filter ended the engine's process/),
        );
        const good = await createActive(receiver.url, { filterFunction: "function main(s) { return s.data }" });
        await waitFor("good completes", async () => (await streamOf(good)).status === "COMPLETED");
      } finally {
        await receiver.close();
      }
    },
    90_000,
  );

  it("the string-and-parse bomb in a stream's filter grows the engine's process by no more than its limit and the stated overhead, ends it once, and its stream pauses with MEMORY", async () => {
    const child = built.engineChild();
    const starts = child?.starts as number;
    const pid = child?.pid as number;
    const residentMiB = () => (Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * 4096) / MIB;
    const before = residentMiB();
    let peak = before;
    const look = setInterval(() => {
      try {
        peak = Math.max(peak, residentMiB());
      } catch {
        // Ended between two looks.
      }
    }, 5);
    const receiver = await startReceiver();
    const attacker = await signUp(built);
    try {
      const bomb = await createActive(
        receiver.url,
        { filterFunction: "function main() { const t = '[' + '1,'.repeat(3e7) + '1]'; return JSON.parse(t).length }" },
        attacker,
      );
      await waitFor("a new engine", async () => (child?.starts ?? 0) > starts, 40_000);
      clearInterval(look);
      // Before: the engine grew past 800 MiB and was ended only for the time its thread was held.
      expect(peak - before).toBeLessThanOrEqual(64 + MEMORY_OVERHEAD_MIB + WATCH_SLACK_MIB);
      const paused = await pausedWith(bomb, attacker);
      expect(paused.statusReason).toMatch(/filter failed.*Out of memory: filter exceeded its memory limit/);
      expect(child?.starts).toBe(starts + 1);
      expect(await streamLogMessages(attacker.client, bomb)).toContainEqual(
        expect.stringMatching(
          /^This stream's filter ended the engine's process \(it grew the engine's process by \d+ MiB while it ran, past its memory limit of 64 MiB/,
        ),
      );
    } finally {
      clearInterval(look);
      await receiver.close();
    }
  }, 90_000);

  it("an account whose filter ended an engine has its next crashing filter run in the sandbox process, by an engine restarted since for another reason too", async () => {
    const child = built.engineChild();
    const receiver = await startReceiver();
    const attacker = await signUp(built);
    const crashing = {
      filterFunction: "function main(s) { new Array(1e9).fill(0) }",
      destinationAttributes: { url: receiver.url, maxRetry: 20, retryIntervalSec: 0 },
    };
    try {
      const starts = child?.starts as number;
      const first = await createActive(receiver.url, crashing, attacker);
      await waitFor("a new engine", async () => (child?.starts ?? 0) > starts, 40_000);
      await pausedWith(first, attacker);
      // The engine ends for another reason: its successor reads the suspects from the data directory.
      const pid = child?.pid as number;
      process.kill(pid, "SIGKILL");
      await waitFor("an engine after the kill", async () => (child?.starts ?? 0) > starts + 1 && child?.pid !== pid);
      const second = await createActive(receiver.url, crashing, attacker);
      const paused = await pausedWith(second, attacker);
      // Paused by its crashes of the sandbox process, with no engine ended for it.
      expect(paused.statusReason).toMatch(/made the sandbox restart 2 times/);
      expect(child?.starts).toBe(starts + 2);
      expect(await streamLogMessages(attacker.client, second)).toContainEqual(
        "This stream's filter runs in the sandbox process for now: another filter of this account ended the engine's process.",
      );
      // Another account's filters still run on the engine's thread and deliver.
      const good = await createActive(receiver.url, { filterFunction: "function main(s) { return s.data }" });
      await waitFor("good completes", async () => (await streamOf(good)).status === "COMPLETED");
    } finally {
      await receiver.close();
    }
  }, 120_000);
});

describe("the stream engine in its own process, killed", () => {
  // A service of its own: the engine's restarts above grew its supervisor's back-off (to 6.4 s), which is
  // right for an engine that keeps dying but would hide whether the streams were taken back at once.
  beforeAll(async () => {
    await built.close();
    await startService();
  }, 120_000);

  it("is restarted after a SIGKILL, takes its streams back at once and delivers every block", async () => {
    const child = built.engineChild();
    const killed = child?.pid as number;
    const starts = child?.starts as number;
    // Slow answers, so the kill lands mid-stream.
    const receiver = await startReceiver(async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return 200;
    });
    try {
      const id = await createActive(receiver.url, { endRange: 40, datasetBatchSize: 1, filterFunction: null });
      await waitFor("some deliveries", async () => receiver.received.length >= 5);
      process.kill(killed, "SIGKILL");
      const killedAt = Date.now();
      await waitFor("a new engine", async () => (child?.starts ?? 0) > starts && child?.pid !== killed);
      await waitFor("the stream completes", async () => (await streamOf(id)).status === "COMPLETED", 30_000);
      // Its lease was reclaimed at once, not after the 15 s TTL: the first delivery after the kill came well before
      // it. (The rest of the range takes 150 ms a block however fast the engine is, so it is not timed.)
      const resumedAt = Math.min(...receiver.received.map((r) => r.at).filter((at) => at > killedAt));
      expect(resumedAt - killedAt).toBeLessThan(12_000);
      const delivered = new Set(receiver.received.flatMap((r) => blockNumbers(r.json)));
      expect([...delivered].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
