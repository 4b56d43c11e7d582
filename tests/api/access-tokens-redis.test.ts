// An API key's limit per client IP is one count for the whole deployment when the service has Redis: two
// API processes on one database and one Redis server refuse the call past the limit, wherever it lands.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { signUp, useTestApp } from "../support/api.ts";
import { describeWithRedis, redisUrl } from "../support/redis.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";

const ctx = useTestApp();

describeWithRedis("API key limits counted in Redis by two processes", () => {
  let processes: ServiceProcess[] = [];
  beforeAll(async () => {
    const env = {
      DATABASE_URL: ctx.app.database.url,
      REDIS_URL: redisUrl(),
      NODEPLANE_ROLES: "api",
      NODEPLANE_ACCESS_TOKEN_KEY: readFileSync(join(ctx.app.dataDir, "access-token-key.secret"), "utf8").trim(),
    };
    processes = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
  });

  it("refuses the call past the limit, whichever process it reaches", async () => {
    const owner = await signUp(ctx.app);
    const { createAccessToken } = await owner.client.gqlOk<{
      createAccessToken: { key: string; accessToken: { id: string } };
    }>(
      'mutation { createAccessToken(input: { name: "ci", role: VIEWER, applications: [CONSOLE_REST] }) { key accessToken { id } } }',
    );
    await owner.client.gqlOk("mutation($id: ID!) { updateAccessTokenIpRateLimit(id: $id, input: { rpm: 3 }) { id } }", {
      id: createAccessToken.accessToken.id,
    });
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${processes[i % 2].url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": createAccessToken.key },
        body: JSON.stringify({ query: "{ viewer { email } }" }),
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("holds a per-second limit on REST across the processes: two calls on one, the third on the other refused", async () => {
    const owner = await signUp(ctx.app);
    const { createAccessToken } = await owner.client.gqlOk<{
      createAccessToken: { key: string; accessToken: { id: string } };
    }>(
      'mutation { createAccessToken(input: { name: "ci", role: VIEWER, applications: [CONSOLE_REST] }) { key accessToken { id } } }',
    );
    await owner.client.gqlOk("mutation($id: ID!) { updateAccessTokenIpRateLimit(id: $id, input: { rps: 2 }) { id } }", {
      id: createAccessToken.accessToken.id,
    });
    const list = async (process: ServiceProcess) =>
      (await fetch(`${process.url}/rest/v1/endpoints`, { headers: { "x-api-key": createAccessToken.key } })).status;
    // Each process has looked the key up once (the lookup is not what is measured below).
    await Promise.all(processes.map(list));
    // A window is one second from its first call; a loaded machine may take longer for the three calls, so
    // a few windows are tried, each after the one before ended. In one process's memory alone the third call
    // would pass every time.
    const trios: number[][] = [];
    for (let attempt = 0; attempt < 5 && !trios.some((t) => t[2] === 429); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const [first, second] = await Promise.all([list(processes[0]), list(processes[0])]);
      trios.push([first, second, await list(processes[1])]);
    }
    expect(trios).toContainEqual([200, 200, 429]);
  });
});
