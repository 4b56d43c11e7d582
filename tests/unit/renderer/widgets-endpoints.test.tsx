// @vitest-environment jsdom
// The endpoint page's code sample against the recorded endpoint: with token authentication on, the
// URL ends in a token placeholder and the page says where tokens come from; with it off, the URL is
// the endpoint's own and there is no placeholder.
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Transport } from "../../../renderer/index.ts";
import { TOKEN_PLACEHOLDER } from "../../../src/widgets/first-request.ts";
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

function withTokenAuth(tokenAuth: boolean): Transport {
  const recorded = fixtureTransport();
  return async (document, variables) => {
    const data = await recorded(document, variables);
    if (!/\bquery\s+Endpoint\b/.test(document)) return data;
    return { ...data, endpoint: { ...(data.endpoint as object), tokenAuth } };
  };
}

async function sampleText(tokenAuth: boolean): Promise<string> {
  const { container } = render(
    renderRoute(`/endpoints/${recordedId}`, {
      registry: registryFor("owner"),
      viewer: viewerFor("OWNER"),
      transport: withTokenAuth(tokenAuth),
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
});
