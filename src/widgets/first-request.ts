// The first request to an endpoint as a sample shows it: the URL and the headers every active
// security method needs, with placeholders for what the console cannot know (a token is shown once,
// a JWT is minted by the caller). Pure, so the `code-sample` widget and the API test that runs the
// sample build the same request.

export const TOKEN_PLACEHOLDER = "YOUR_TOKEN";
export const JWT_PLACEHOLDER = "YOUR_JWT";

/** The endpoint's security as the `security(id)` query reads it (only what a sample needs). */
export interface SampleSecurity {
  options: { tokens?: boolean; jwts?: boolean; referrers?: boolean; ips?: boolean };
  jwts?: { name: string; kid: string }[];
  referrers?: { referrer: string }[];
}

export interface FirstRequestInput {
  url: string;
  wssUrl?: string;
  method: string;
  /** The endpoint's first token, when the service has just returned it (createEndpoint). */
  token?: string;
  /** Token auth on, known without the security settings (createEndpoint's answer). */
  tokenRequired?: boolean;
  security?: SampleSecurity | null;
}

/** One active security method, in words, as the card lists it above the samples. */
export interface ActiveMethod {
  key: "token" | "jwt" | "referrer" | "ip";
  label: string;
  text: string;
}

export interface FirstRequest {
  url: string;
  wssUrl: string;
  /** Header name to value, in the order a sample writes them. */
  headers: [string, string][];
  body: string;
  active: ActiveMethod[];
}

/** An endpoint URL with a token as its last path segment, as the proxy reads it (`/rpc/<key>/<token>`). */
export function withToken(url: string, token: string): string {
  return `${url.replace(/\/$/, "")}/${token}`;
}

/** A referrer entry as an Origin value: entries are host names, maybe wildcards ("*.example.com"). */
function originOf(referrer: string): string {
  const host = referrer.replace(/^\*\./, "app.");
  return /^https?:\/\//.test(host) ? host : `https://${host}`;
}

export function firstRequest(input: FirstRequestInput): FirstRequest {
  const options = input.security?.options ?? {};
  const tokenOn = Boolean(input.token) || input.tokenRequired === true || options.tokens === true;
  const pathToken = input.token || (tokenOn ? TOKEN_PLACEHOLDER : "");
  const url = pathToken ? withToken(input.url, pathToken) : input.url;
  const wssUrl = input.wssUrl && pathToken ? withToken(input.wssUrl, pathToken) : (input.wssUrl ?? "");
  const headers: [string, string][] = [["Content-Type", "application/json"]];
  const active: ActiveMethod[] = [];
  if (tokenOn)
    active.push({
      key: "token",
      label: "token",
      text: input.token
        ? "Token: the URL ends in the endpoint's first token."
        : `Token: replace ${TOKEN_PLACEHOLDER} in the URL with one of this endpoint's tokens (Security tab); a token is shown once, when it is created.`,
    });
  if (options.jwts) {
    headers.push(["Authorization", `Bearer ${JWT_PLACEHOLDER}`]);
    const keys = (input.security?.jwts ?? []).map((k) => `"${k.name}" (kid ${k.kid})`);
    active.push({
      key: "jwt",
      label: "JWT",
      text: keys.length
        ? `JWT: replace ${JWT_PLACEHOLDER} with a JWT signed by the private key of ${keys.join(" or ")}, its kid in the header and an exp claim (e.g. jose's SignJWT with the key's algorithm, RS256 for an RSA key, ES256 for a P-256 key).`
        : `JWT: no JWT key is uploaded yet, so no call can pass; add a public key on the Security tab, then sign ${JWT_PLACEHOLDER} with its private key (kid in the header, an exp claim).`,
    });
  }
  if (options.referrers) {
    const first = input.security?.referrers?.[0]?.referrer;
    if (first) headers.push(["Origin", originOf(first)]);
    active.push({
      key: "referrer",
      label: "referrer",
      text: first
        ? `Referrer: calls must name an allowed origin; the samples send Origin ${originOf(first)} (a browser sends its page's own).`
        : "Referrer: no referrer is allowed yet, so no call can pass; add one on the Security tab.",
    });
  }
  if (options.ips)
    active.push({
      key: "ip",
      label: "IP allowlist",
      text: "IP allowlist: the call must come from an allowed address (Security tab); no header in a sample can change that.",
    });
  return {
    url,
    wssUrl,
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: input.method, params: [] }),
    active,
  };
}

/** The cURL command for a first request, as the card shows and copies it. */
export function curlOf(request: FirstRequest): string {
  const lines = [
    `curl -X POST ${request.url}`,
    ...request.headers.map(([name, value]) => `  -H "${name}: ${value}"`),
    `  --data '${request.body}'`,
  ];
  return lines.join(" \\\n");
}
