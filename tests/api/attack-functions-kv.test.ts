import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { pruneActivations } from "../../server/domains/functions/store.ts";
import { openDatabase } from "../../server/platform/db/index.ts";
import { signUp, type TestUser, useTestApp } from "../support/api.ts";

// Functions, their sandbox and the key-value store against a hostile user: what an attack found open.
// (What was already refused is tested beside its feature: functions*.test.ts, kv*.test.ts.)

const ctx = useTestApp();

async function initiate(owner: TestUser, key: string) {
  const { initiateListUpload } = await owner.client.gqlOk<{ initiateListUpload: { uploadId: string } }>(
    "mutation($key: String!) { initiateListUpload(input: { key: $key }) { uploadId } }",
    { key },
  );
  return initiateListUpload.uploadId;
}

async function partUrl(owner: TestUser, uploadId: string, partNumber: number) {
  const { kvUploadPartUrl } = await owner.client.gqlOk<{ kvUploadPartUrl: { url: string } }>(
    "mutation($input: KvUploadPartInput!) { kvUploadPartUrl(input: $input) { url } }",
    { input: { uploadId, partNumber } },
  );
  return kvUploadPartUrl.url;
}

/**
 * A PUT whose headers announce `announced` bytes of body, of which only the first few are sent: the
 * connection stays open, as a slow or hostile client keeps it. `answer` is the status line the service
 * sends before the body is complete, or null when it sent none within `waitMs`.
 */
async function heldPut(
  url: string,
  announced: number,
  waitMs: number,
): Promise<{ socket: Socket; answer: string | null }> {
  const target = new URL(url);
  const socket = connect(Number(target.port), target.hostname);
  socket.on("error", () => undefined);
  let received = "";
  socket.on("data", (chunk) => {
    received += chunk.toString("latin1");
  });
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.write(
    `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
      `Content-Type: application/octet-stream\r\nContent-Length: ${announced}\r\n\r\n`,
  );
  socket.write(Buffer.alloc(64 * 1024, 0x61));
  const deadline = Date.now() + waitMs;
  while (!received.includes("\r\n") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return { socket, answer: received.includes("\r\n") ? received.slice(0, received.indexOf("\r\n")) : null };
}

describe("upload part URLs against a client that sends bodies it is not allowed to", () => {
  it("a part URL without a valid signature is refused before its body is read", async () => {
    const owner = await signUp(ctx.app);
    const uploadId = await initiate(owner, "unsigned");
    const url = new URL(await partUrl(owner, uploadId, 1));
    url.searchParams.set("signature", "forged");
    // 16 MiB announced, 64 KiB sent: the service held every such body in memory before refusing it
    // (40 connections took it from 159 to 783 MB, without signing in).
    const { socket, answer } = await heldPut(url.toString(), 16 * 1024 * 1024 - 1, 3_000);
    socket.destroy();
    expect(answer).toBe("HTTP/1.1 403 Forbidden");
  });

  it("an account's parts being received at once are bounded; the room comes back when a connection ends", async () => {
    const owner = await signUp(ctx.app);
    const uploadId = await initiate(owner, "parallel");
    const url = await partUrl(owner, uploadId, 1);
    // Four bodies of 16 MiB on their way fill the account's 64 MiB of parts being received...
    const held = [];
    for (let i = 0; i < 4; i++) {
      const put = await heldPut(url, 16 * 1024 * 1024, 300);
      expect(put.answer).toBeNull();
      held.push(put.socket);
    }
    // ...so a fifth, however small, is refused at once, saying why.
    const refused = await fetch(url, { method: "PUT", body: "a\nb\n" });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error:
        "This account is already sending 64 MiB of upload parts and may send at most 64 MiB at once: send the parts one after another.",
      code: "RATE_LIMITED",
    });
    for (const socket of held) socket.destroy();
    // A client whose connection broke sends its part again: the broken ones no longer count.
    let answer = 0;
    for (let attempt = 0; attempt < 40 && answer !== 200; attempt++) {
      await new Promise((r) => setTimeout(r, 50));
      answer = (await fetch(url, { method: "PUT", body: "a\nb\n" })).status;
    }
    expect(answer).toBe(200);
  });
});

describe("a run that outlasts its time limit", () => {
  it("is billed its time limit, also when V8 could not stop it and the sandbox was replaced seconds later", async () => {
    const owner = await signUp(ctx.app);
    // ICU's normalize of a 6 M-character string holds V8 past its limit: the watchdog replaced the sandbox
    // 2 s after it, and the run of a 1 s function was billed 3–5 s.
    const code =
      "function main() { const s = '\\u1E9B\\u0323'.repeat(3e6); let n = 0; for (let i = 0; i < 50; i++) n += s.normalize('NFKD').length; return n }";
    const { createFunction } = await owner.client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      { input: { name: "stuck", code, timeoutSec: 1 } },
    );
    const { callFunction } = await owner.client.gqlOk<{
      callFunction: {
        success: boolean;
        error: string;
        errorKind: string;
        duration: number;
        billable: number;
        memoryLimit: number;
      };
    }>(
      "mutation($id: ID!) { callFunction(input: { id: $id }) { success error errorKind duration billable memoryLimit } }",
      {
        id: createFunction.id,
      },
    );
    expect(callFunction).toMatchObject({ success: false, errorKind: "TIMEOUT", memoryLimit: 128 });
    expect(callFunction.duration).toBeGreaterThanOrEqual(1_000);
    // 128 MB for 1 s: 0.125 GB-seconds.
    expect(callFunction.billable).toBe(0.125);
  }, 30_000);
});

describe("a function deleted while it runs", () => {
  it("still bills the run and answers NOT_FOUND saying so, from GraphQL and from its HTTP address", async () => {
    const owner = await signUp(ctx.app);
    const database = openDatabase(ctx.app.database.url, 1);
    try {
      const billedMbMs = async () => {
        const { rows } = await database.execute<{ mb_ms: string | null }>(
          sql`select sum(mb_ms) as mb_ms from function_usage_minutes where account_id = ${owner.viewer.id}`,
        );
        return Number(rows[0].mb_ms ?? 0);
      };
      const create = async () =>
        (
          await owner.client.gqlOk<{ createFunction: { id: string } }>(
            "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
            {
              input: {
                name: "slow",
                code: "function main() { const t = Date.now(); while (Date.now() - t < 1500); return 1 }",
              },
            },
          )
        ).createFunction.id;
      const deleteSoon = (id: string) =>
        new Promise((resolve) => setTimeout(resolve, 500)).then(() =>
          owner.client.gqlOk("mutation($id: ID!) { deleteFunction(id: $id) { success } }", { id }),
        );
      const message = "The function was deleted while this call ran: the run was billed, and kept in no history.";

      // A run whose function went before it ended was billed nothing, and its caller got INTERNAL: deleting
      // the function just before each run ended ran any code for free.
      const viaApi = await create();
      const [called] = await Promise.all([
        owner.client.gql("mutation($id: ID!) { callFunction(input: { id: $id }) { success } }", { id: viaApi }),
        deleteSoon(viaApi),
      ]);
      expect(called.errors?.[0]).toMatchObject({ message, extensions: { code: "NOT_FOUND" } });
      expect(await billedMbMs()).toBeGreaterThanOrEqual(128 * 1500);

      const viaHttp = await create();
      const [answer] = await Promise.all([
        owner.client.request(`/functions/${viaHttp}/call`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }),
        deleteSoon(viaHttp),
      ]);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toEqual({ error: message, code: "NOT_FOUND" });
      expect(await billedMbMs()).toBeGreaterThanOrEqual(2 * 128 * 1500);
    } finally {
      await database.$client.end();
    }
  }, 30_000);
});

describe("what a function's history keeps", () => {
  it("is bounded in bytes as well as in runs: past the bytes, older runs keep only their outcome and preview", async () => {
    const owner = await signUp(ctx.app);
    const database = openDatabase(ctx.app.database.url, 1);
    try {
      const { createFunction } = await owner.client.gqlOk<{ createFunction: { id: string } }>(
        "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
        { input: { name: "echo", code: "function main(p) { return p.user_data }" } },
      );
      // 128 KiB of user data, returned: each run kept ~256 KiB (its user data and its whole result), and a
      // function kept 1,000 runs, so a Free account's ten kept 2.5 GB, written at ~18 MB/s by one caller.
      // Random, so PostgreSQL's compression does not make it small.
      const userData = (i: number) => `${i}:${randomBytes(96 * 1024).toString("base64")}`;
      const sent: string[] = [];
      for (let i = 0; i < 120; i++) {
        sent.push(userData(i));
        const answer = await owner.client.request(`/functions/${createFunction.id}/call`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ user_data: sent[i] }),
        });
        expect(answer.status).toBe(200);
      }
      const { rows } = await database.execute<{ runs: number; bytes: string; newest: string; shed: number }>(sql`
        select count(*)::int as runs,
          sum(coalesce(pg_column_size(result_json), 0) + coalesce(pg_column_size(user_data), 0)
            + pg_column_size(logs)) as bytes,
          max(user_data #>> '{}') filter (where user_data #>> '{}' like '119:%') as newest,
          (count(*) filter (where result_json is null and user_data is null))::int as shed
        from function_activations where function_id = ${createFunction.id}`);
      // Every run stays in the history; the older ones without their heavy parts.
      expect(rows[0].runs).toBe(120);
      expect(rows[0].shed).toBeGreaterThan(0);
      // 16 MiB, and the runs recorded since the last prune (it runs every 50).
      expect(Number(rows[0].bytes)).toBeLessThanOrEqual(16 * 1024 * 1024 + 50 * 2 * 130 * 1024);
      expect(rows[0].newest).toBe(sent[119]);
      // The oldest run: its outcome and size are kept, its whole result answered as not kept.
      const first = await database.execute<{ id: string }>(sql`
        select id from function_activations where function_id = ${createFunction.id} order by created_at limit 1`);
      const id = first.rows[0].id;
      const oldest = await owner.client.gqlOk<{
        functionActivation: { success: boolean; size: number; userData: unknown };
      }>("query($id: ID!) { functionActivation(id: $id) { success size userData } }", { id });
      expect(oldest.functionActivation).toMatchObject({ success: true, userData: null });
      expect(oldest.functionActivation.size).toBeGreaterThan(96 * 1024);
      const result = await owner.client.gqlOk<{ functionActivationResult: { kept: boolean; result: unknown } }>(
        "query($id: ID!) { functionActivationResult(id: $id) { kept result } }",
        { id },
      );
      expect(result.functionActivationResult).toEqual({ kept: false, result: null });

      // Past the count, the oldest runs go altogether.
      await pruneActivations(database, createFunction.id, { runs: 100, bytes: 16 * 1024 * 1024 });
      const left = await database.execute<{ runs: number }>(sql`
        select count(*)::int as runs from function_activations where function_id = ${createFunction.id}`);
      expect(left.rows[0].runs).toBe(100);
      const gone = await database.execute(sql`select 1 from function_activations where id = ${id}`);
      expect(gone.rows).toEqual([]);
    } finally {
      await database.$client.end();
    }
  }, 60_000);
});
