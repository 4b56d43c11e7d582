// How the built console is delivered: every file of the build by content negotiation (brotli, gzip or
// as it is), cached for a year when its name is hashed and revalidated otherwise, with the security
// headers; under an https PUBLIC_URL the session cookie is Secure and HSTS is sent.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BUILD_STAMP } from "../../server/platform/console-build.ts";
import { ensureBuilt, repoRoot } from "../e2e/harness-build.ts";
import { useTestApp } from "../support/api.ts";

const DEMO_PASSWORD = "demo-password-for-tests";
const distDir = path.join(repoRoot, "dist");

beforeAll(() => ensureBuilt(), 300_000);

/**
 * Every file of the build a browser may ask for: not the compressed copies, the build's stamp, nor Vite's
 * manifest in `.vite/` (read by the JavaScript budget check; the service serves no dot folder).
 */
function builtFiles(): string[] {
  return readdirSync(distDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !/\.(br|gz)$/.test(entry.name) && entry.name !== BUILD_STAMP)
    .map((entry) => path.relative(distDir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((file) => !file.startsWith(".vite/"));
}

function expectSecurityHeaders(response: Response, what: string) {
  const csp = response.headers.get("content-security-policy") ?? "";
  expect(csp, what).toMatch(/script-src 'self'/);
  expect(csp, what).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  // The forms' validators are compiled ahead (schemas/generated/form-validators.ts): nothing evaluates code.
  expect(csp, what).not.toMatch(/'unsafe-eval'/);
  expect(csp, what).toMatch(/frame-ancestors 'none'/);
  expect(response.headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(response.headers.get("referrer-policy"), what).toBe("no-referrer");
}

async function signInResponse(url: string): Promise<Response> {
  return fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: "mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { id } }",
      variables: { e: "demo@nodeplane.local", p: DEMO_PASSWORD },
    }),
  });
}

describe("served over https (PUBLIC_URL)", () => {
  const ctx = useTestApp({ PUBLIC_URL: "https://console.example.test" });

  it("sends every file of the build as brotli, gzip or as it is, by Accept-Encoding, with its caching and security headers", async () => {
    const files = builtFiles();
    expect(files).toContain("index.html");
    expect(files.filter((file) => file.startsWith("assets/") && file.endsWith(".js")).length).toBeGreaterThan(3);
    for (const file of files) {
      const original = readFileSync(path.join(distDir, file));
      const compressed = /\.(js|css|html|svg|json)$/.test(file);
      const hashed = file.startsWith("assets/");
      for (const [accept, encoding] of [
        ["br, gzip", compressed ? "br" : null],
        ["gzip", compressed ? "gzip" : null],
        ["identity", null],
      ] as const) {
        const what = `${file} with Accept-Encoding: ${accept}`;
        // fetch decodes the body; the header says what travelled.
        const response = await fetch(`${ctx.app.url}/${file}`, { headers: { "accept-encoding": accept } });
        expect(response.status, what).toBe(200);
        expect(response.headers.get("content-encoding"), what).toBe(encoding);
        expect(Buffer.from(await response.arrayBuffer()).equals(original), what).toBe(true);
        expect(response.headers.get("vary")?.toLowerCase(), what).toContain("accept-encoding");
        expect(response.headers.get("cache-control"), what).toBe(
          hashed ? "public, max-age=31536000, immutable" : "no-cache",
        );
        expectSecurityHeaders(response, what);
        expect(response.headers.get("strict-transport-security"), what).toBe("max-age=31536000");
      }
    }
  }, 120_000);

  it("answers the console's routes with index.html, revalidated, compressed, and with no inline script", async () => {
    for (const route of ["/", "/endpoints", "/sign-in?next=%2Fendpoints"]) {
      const response = await fetch(`${ctx.app.url}${route}`, { headers: { "accept-encoding": "br, gzip" } });
      expect(response.status, route).toBe(200);
      expect(response.headers.get("content-type"), route).toMatch(/^text\/html/);
      expect(response.headers.get("content-encoding"), route).toBe("br");
      expect(response.headers.get("cache-control"), route).toBe("no-cache");
      expectSecurityHeaders(response, route);
      const html = await response.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length, route).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag, route).toMatch(/\bsrc="\/assets\//);
      expect(html, route).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
    }
  });

  it("sets the session cookie Secure and HttpOnly, and the API answers with HSTS and the security headers", async () => {
    const response = await signInResponse(ctx.app.url);
    expect(response.status).toBe(200);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith("np_session="));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(response.headers.get("strict-transport-security")).toBe("max-age=31536000");
    expectSecurityHeaders(response, "/graphql");
  });
});

describe("served over plain http (no PUBLIC_URL)", () => {
  const ctx = useTestApp();

  it("sends no HSTS and a session cookie without Secure (a browser would drop it on http)", async () => {
    const response = await signInResponse(ctx.app.url);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith("np_session="));
    expect(cookie).toBeDefined();
    expect(cookie).not.toMatch(/;\s*Secure/i);
    expect(response.headers.get("strict-transport-security")).toBeNull();
    const page = await fetch(`${ctx.app.url}/endpoints`);
    expect(page.headers.get("strict-transport-security")).toBeNull();
    expectSecurityHeaders(page, "/endpoints");
  });
});
