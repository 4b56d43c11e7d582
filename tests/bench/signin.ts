/**
 * The sign-in burst benchmark (`npm run bench -- signin`, or `node --import tsx tests/bench/signin.ts`).
 * The service runs as its own process on a throw-away PostgreSQL, without local chain nodes. 200 sign-ins
 * with a wrong password for the demo owner are sent at once, each from an address of its own (so only the
 * email's limit acts), then one with the right password.
 * Targets: exactly LOCK_AFTER attempts are checked and the rest refused, the right password included; the
 * slowest answer comes within the schedule's longest wait and a second for the check. The refused answers'
 * p95 is printed: they wait for no back-off, only for their two counter writes (on 2 shared cores, with the
 * burst's 400 writes queued on the service's 10 connections, some hundreds of ms).
 */
import { LOCK_AFTER, signInBackoffMs } from "../../server/domains/account/sign-in-guard.ts";
import { DEMO_OWNER } from "../../server/seed.ts";
import { startServiceProcess } from "../support/service-process.ts";
import { startPostgres } from "./postgres.ts";

const BURST = 200;
const DEMO_PASSWORD = "bench-demo-password";

export interface SignInBenchResult {
  /** LOCK_AFTER attempts checked, every other one and then the right password refused. */
  correct: boolean;
  checked: number;
  refused: number;
  rightPasswordRefused: boolean;
  refusedP95Ms: number;
  slowestMs: number;
  /** What the slowest answer must stay under: the schedule's longest wait and a second for the check. */
  slowestBoundMs: number;
}

async function attempt(
  url: string,
  email: string,
  password: string,
  address: string,
): Promise<{ code: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": address },
    body: JSON.stringify({
      query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      variables: { e: email, p: password },
    }),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { code: body.errors?.[0]?.extensions?.code ?? "OK", ms: performance.now() - started };
}

export async function runSignInBench(log: (line: string) => void = console.log): Promise<SignInBenchResult> {
  const postgres = await startPostgres();
  let service: Awaited<ReturnType<typeof startServiceProcess>> | null = null;
  try {
    service = await startServiceProcess({
      NODE_ENV: "production",
      NODEPLANE_ALLOWED_HOSTS: "127.0.0.1,localhost",
      DATABASE_URL: postgres.url,
      NODEPLANE_DEMO_PASSWORD: DEMO_PASSWORD,
      NODEPLANE_LOCAL_CHAIN: "0",
      // The bench names client addresses in X-Forwarded-For.
      NODEPLANE_TRUST_PROXY: "127.0.0.1,::1",
    });
    const url = service.url;
    // Warm-up (connections, prepared statements), from an address and for an email of their own.
    for (let i = 0; i < 20; i++) await attempt(url, "nobody@example.com", "wrong-password", "10.202.0.1");
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        attempt(url, DEMO_OWNER, "wrong-password", `10.200.${Math.floor(i / 250)}.${(i % 250) + 1}`),
      ),
    );
    const right = await attempt(url, DEMO_OWNER, DEMO_PASSWORD, "10.201.0.1");
    const refusedTimes = answers
      .filter((a) => a.code === "RATE_LIMITED")
      .map((a) => a.ms)
      .sort((a, b) => a - b);
    const checked = answers.filter((a) => a.code === "UNAUTHENTICATED").length;
    const rightPasswordRefused = right.code === "RATE_LIMITED";
    const result: SignInBenchResult = {
      correct: checked === LOCK_AFTER && refusedTimes.length === BURST - LOCK_AFTER && rightPasswordRefused,
      checked,
      refused: refusedTimes.length,
      rightPasswordRefused,
      refusedP95Ms: refusedTimes[Math.min(refusedTimes.length - 1, Math.floor(refusedTimes.length * 0.95))] ?? 0,
      slowestMs: Math.max(...answers.map((a) => a.ms)),
      slowestBoundMs: signInBackoffMs(LOCK_AFTER - 1) + 1000,
    };
    log(
      `${BURST} parallel wrong passwords: ${result.checked} checked, ${result.refused} refused ` +
        `(p95 ${result.refusedP95Ms.toFixed(0)} ms), slowest ${result.slowestMs.toFixed(0)} ms; ` +
        `right password then: ${right.code}`,
    );
    return result;
  } finally {
    await service?.stop();
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runSignInBench();
}
