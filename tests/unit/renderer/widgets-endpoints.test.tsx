// @vitest-environment jsdom
// The endpoint page's code sample against the recorded endpoint: with token authentication on, the
// URL ends in a token placeholder and the page says where tokens come from; with it off, the URL is
// the endpoint's own and there is no placeholder.
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { GqlError, type Transport } from "../../../renderer/index.ts";
import { JWT_PLACEHOLDER, type SampleSecurity, TOKEN_PLACEHOLDER } from "../../../src/widgets/first-request.ts";
import {
  fixtureTransport,
  installDomStandIns,
  recordedId,
  recordedResponses,
  registryFor,
  renderRoute,
  viewerFor,
} from "./harness.tsx";

beforeAll(installDomStandIns);
afterEach(cleanup);

const recordedEndpoint = recordedResponses.Endpoint?.data as
  | { endpoint: { httpUrl: string; tokenAuth: boolean } }
  | undefined;
if (!recordedEndpoint) throw new Error("the fixtures hold no recorded Endpoint response");
const { endpoint } = recordedEndpoint;

function withTokenAuth(tokenAuth: boolean, security?: SampleSecurity): Transport {
  const recorded = fixtureTransport();
  return async (document, variables) => {
    const data = await recorded(document, variables);
    if (!/\bquery\s+Endpoint\b/.test(document)) return data;
    // Without a security of its own, the recorded one with its token option as `tokenAuth` says, as the
    // service answers them (both read the same setting).
    const recordedSecurity = (data.endpoint as { security: SampleSecurity }).security;
    const agreeing = { ...recordedSecurity, options: { ...recordedSecurity.options, tokens: tokenAuth } };
    return { ...data, endpoint: { ...(data.endpoint as object), tokenAuth, security: security ?? agreeing } };
  };
}

async function sampleText(tokenAuth: boolean, security?: SampleSecurity): Promise<string> {
  const { container } = render(
    renderRoute(`/endpoints/${recordedId}`, {
      registry: registryFor("owner"),
      viewer: viewerFor("OWNER"),
      transport: withTokenAuth(tokenAuth, security),
    }),
  );
  await screen.findByText(/curl -X POST/, {}, { timeout: 10_000 });
  return container.textContent ?? "";
}

describe("code-sample", () => {
  it("puts a token placeholder in the URL when token authentication is on", async () => {
    const text = await sampleText(true);
    expect(text).toContain(`curl -X POST ${endpoint.httpUrl}/${TOKEN_PLACEHOLDER}`);
    expect(text).toContain("Token authentication is on");
  });

  it("uses the endpoint's URL as it is when token authentication is off", async () => {
    const text = await sampleText(false);
    expect(text).toContain(`curl -X POST ${endpoint.httpUrl} `);
    expect(text).not.toContain(TOKEN_PLACEHOLDER);
  });

  it("token only: the URL's placeholder, no other header", async () => {
    const text = await sampleText(true, { options: { tokens: true }, jwts: [], referrers: [] });
    expect(text).toContain(`curl -X POST ${endpoint.httpUrl}/${TOKEN_PLACEHOLDER}`);
    expect(text).toContain("Token authentication is on");
    expect(text).not.toContain("Authorization");
    expect(text).not.toContain("Origin");
  });

  it("token, JWT and referrer: says which are on, and the samples carry each one's header", async () => {
    const text = await sampleText(true, {
      options: { tokens: true, jwts: true, referrers: true },
      jwts: [{ name: "backend", kid: "ec-1" }],
      referrers: [{ referrer: "dapp.example.org" }],
    });
    expect(text).toContain("Security on this endpoint: token, JWT, referrer");
    expect(text).toContain(`curl -X POST ${endpoint.httpUrl}/${TOKEN_PLACEHOLDER}`);
    expect(text).toContain(`-H "Authorization: Bearer ${JWT_PLACEHOLDER}"`);
    expect(text).toContain('-H "Origin: https://dapp.example.org"');
    expect(text).toContain('"backend" (kid ec-1)');
  });

  it("nothing on: the endpoint's URL as it is, no placeholder, and it says anyone with the URL can call", async () => {
    const text = await sampleText(false, { options: {}, jwts: [], referrers: [] });
    expect(text).toContain(`curl -X POST ${endpoint.httpUrl} `);
    expect(text).not.toContain(TOKEN_PLACEHOLDER);
    expect(text).not.toContain(JWT_PLACEHOLDER);
    expect(text).toContain("No security method is on");
  });

  it("an unknown endpoint shows only Not found, no first-request card", async () => {
    const recorded = fixtureTransport();
    const transport: Transport = async (document, variables) => {
      if (/\bquery\s+Endpoint\b/.test(document)) throw new GqlError("Endpoint was not found.", "NOT_FOUND");
      return recorded(document, variables);
    };
    const { container } = render(
      renderRoute("/endpoints/00000000-0000-0000-0000-000000000000", {
        registry: registryFor("owner"),
        viewer: viewerFor("OWNER"),
        transport,
      }),
    );
    await screen.findByText("Not found", undefined, { timeout: 10_000 });
    expect(container.textContent).not.toContain("Make your first request");
    expect(container.querySelector('[data-view="custom"]')).toBeNull();
  });
});
