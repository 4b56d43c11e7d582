import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DEMO_PASSWORD, screenshot, settle, useE2E } from "./harness.ts";

// The endpoint page's first-request card with token, JWT and referrer on: its copied cURL, with the
// placeholders filled, gets the chain's answer from a local anvil node the service starts.
const networksFile = join(mkdtempSync(join(tmpdir(), "nodeplane-e2e-networks-")), "networks.json");
writeFileSync(networksFile, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 1 } }));
const e2e = useE2E({ env: { NODEPLANE_LOCAL_CHAIN: "1", NODEPLANE_NETWORKS_CONFIG: networksFile } });

async function gql<T>(page: Page, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await page.evaluate(
    async ({ query, variables }) => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
    },
    { query, variables },
  );
  if (answer.errors?.length) throw new Error(`${query}: ${JSON.stringify(answer.errors)}`);
  return answer.data as T;
}

async function choose(page: Page, label: string, option: string) {
  await page.getByLabel(label).click();
  await page.locator(".ant-select-dropdown:visible").getByText(option, { exact: true }).click();
}

describe("the first-request card", () => {
  it("with token, JWT and referrer on, says so and its copied cURL works once filled", async () => {
    const page = await e2e.newPage();
    await page.goto("/");
    await page.getByLabel("Email").fill("demo@nodeplane.local");
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: /endpoints/i })
      .first()
      .waitFor();

    await page.goto("/endpoints/new");
    await choose(page, "Chain", "Ethereum");
    await choose(page, "Network", "Ethereum Sepolia");
    await page.getByLabel("Label").fill("E2E first request");
    await page.getByRole("button", { name: /create endpoint/i }).click();
    const tokenUrl = ((await page.locator('[data-url="http"] .np-url-value code').first().textContent()) ?? "").trim();
    const token = tokenUrl.split("/").pop() ?? "";
    await page.getByRole("button", { name: /go to the endpoint/i }).click();
    await page.waitForURL(/\/endpoints\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split("/").pop() as string;

    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    await gql(
      page,
      'mutation($id: ID!, $k: String!) { createJwt(id: $id, name: "backend", publicKey: $k, kid: "rsa-1") { id } }',
      {
        id,
        k: await exportSPKI(publicKey),
      },
    );
    await gql(page, 'mutation($id: ID!) { createReferrer(endpointId: $id, referrer: "dapp.example.org") { id } }', {
      id,
    });
    for (const option of ["jwts", "referrers"])
      await gql(page, `mutation($id: ID!) { updateOption(id: $id, option: ${option}, status: ENABLED) { jwts } }`, {
        id,
      });

    await page.reload();
    await settle(page);
    const card = page.locator('[data-widget="code-sample"]');
    await card.getByText("Security on this endpoint").waitFor();
    const curl = (await card.locator("pre").filter({ visible: true }).first().textContent()) ?? "";
    expect(curl).toContain("Authorization: Bearer YOUR_JWT");
    expect(curl).toContain("Origin: https://dapp.example.org");
    await screenshot(page, "first-request-jwt-referrer");

    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "rsa-1" })
      .setExpirationTime("5m")
      .sign(privateKey);
    const command = curl.replace("YOUR_TOKEN", token).replace("YOUR_JWT", jwt);
    const output = execFileSync("sh", ["-c", `${command} --silent`], { encoding: "utf8", timeout: 20_000 });
    // The card asks for eth_blockNumber: a block number, from the chain behind the proxy.
    expect(JSON.parse(output).result).toMatch(/^0x[0-9a-f]+$/);
  }, 180_000);
});
