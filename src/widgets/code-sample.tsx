// `code-sample`: how to call a JSON-RPC endpoint: its HTTP and WebSocket URLs, each with a copy
// button, and ready-to-run samples for cURL, viem, ethers, web3.py and a WebSocket subscription.
// Options: { url: pointer (HTTP URL), wssUrl?: pointer, method?: string (cURL's method),
// tokenRequired?: pointer to a boolean, token?: pointer to the endpoint's first token }.
// With a token (createEndpoint's answer, the only time the service returns one) the URLs and samples
// carry it and the viewer is told it is shown once. Without one, when a token is required, the URLs
// end in a placeholder: tokens are shown only once, so the console cannot fill one in later.
import { Alert, Tabs, Typography } from "antd";
import { type CustomViewProps, getPointer } from "../../renderer/index.ts";

function textAt(data: unknown, pointer: unknown): string {
  if (typeof pointer !== "string") return "";
  const value = getPointer(data, pointer);
  return value === undefined || value === null ? "" : String(value);
}

export const TOKEN_PLACEHOLDER = "YOUR_TOKEN";

/** An endpoint URL with a token as its last path segment, as the proxy reads it (`/rpc/<key>/<token>`). */
export function withToken(url: string, token: string): string {
  return `${url.replace(/\/$/, "")}/${token}`;
}

export interface Sample {
  key: string;
  label: string;
  code: string;
}

/** The samples for an endpoint's HTTP URL (and WebSocket URL, when it has one). */
export function samples(url: string, method: string, wssUrl = ""): Sample[] {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] });
  const http: Sample[] = [
    {
      key: "curl",
      label: "cURL",
      code: `curl -X POST ${url} \\\n  -H "Content-Type: application/json" \\\n  --data '${body}'`,
    },
    {
      key: "viem",
      label: "viem",
      code: `import { createPublicClient, http } from "viem";\n\nconst client = createPublicClient({ transport: http("${url}") });\nconsole.log(await client.getBlockNumber());`,
    },
    {
      key: "ethers",
      label: "ethers",
      code: `import { JsonRpcProvider } from "ethers";\n\nconst provider = new JsonRpcProvider("${url}");\nconsole.log(await provider.getBlockNumber());`,
    },
    {
      key: "web3py",
      label: "web3.py",
      code: `from web3 import Web3\n\nw3 = Web3(Web3.HTTPProvider("${url}"))\nprint(w3.eth.block_number)`,
    },
  ];
  if (!wssUrl) return http;
  const subscribe = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] });
  return [
    ...http,
    {
      key: "websocket",
      label: "WebSocket",
      code: `// A new block's header as each block arrives (Node.js 22+ or a browser).\nconst socket = new WebSocket("${wssUrl}");\nsocket.onopen = () => socket.send('${subscribe}');\nsocket.onmessage = (event) => console.log(JSON.parse(event.data));`,
    },
  ];
}

function UrlRow({ label, url, kind }: { label: string; url: string; kind: string }) {
  return (
    <div className="np-url-row" data-url={kind}>
      <Typography.Text type="secondary" className="np-url-label">
        {label}
      </Typography.Text>
      <Typography.Text code copyable={{ text: url, tooltips: [`Copy ${label}`, "Copied"] }} className="np-url-value">
        {url}
      </Typography.Text>
    </div>
  );
}

export function CodeSample({ data, options }: CustomViewProps) {
  const baseUrl = textAt(data, options.url ?? "/url");
  const baseWss = textAt(data, options.wssUrl);
  const token = textAt(data, options.token);
  const method = typeof options.method === "string" ? options.method : "eth_blockNumber";
  const tokenRequired = typeof options.tokenRequired === "string" && getPointer(data, options.tokenRequired) === true;
  if (!baseUrl) return <Typography.Text type="secondary">No URL to show yet.</Typography.Text>;
  const pathToken = token || (tokenRequired ? TOKEN_PLACEHOLDER : "");
  const url = pathToken ? withToken(baseUrl, pathToken) : baseUrl;
  const wssUrl = baseWss && pathToken ? withToken(baseWss, pathToken) : baseWss;
  return (
    <div data-widget="code-sample">
      {token ? (
        <Alert
          type="warning"
          showIcon
          style={{ marginBottom: 12 }}
          title="These URLs hold the endpoint's first token and are shown only now: copy them before you leave this page."
          description="Anyone with a URL can call the endpoint. Make more tokens, or delete this one, on the endpoint's Security tab."
        />
      ) : tokenRequired ? (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 12 }}
          title={`Token authentication is on: replace ${TOKEN_PLACEHOLDER} with one of this endpoint's tokens (Security tab). A token is shown once, when it is created.`}
        />
      ) : null}
      <div className="np-urls">
        <UrlRow label="HTTP URL" url={url} kind="http" />
        {wssUrl ? <UrlRow label="WebSocket URL" url={wssUrl} kind="wss" /> : null}
      </div>
      <Tabs
        size="small"
        className="np-sample-tabs"
        items={samples(url, method, wssUrl).map((sample) => ({
          key: sample.key,
          label: sample.label,
          children: (
            <div className="np-code">
              <Typography.Paragraph
                copyable={{ text: sample.code, tooltips: [`Copy the ${sample.label} sample`, "Copied"] }}
                style={{ margin: 0 }}
              >
                <pre>{sample.code}</pre>
              </Typography.Paragraph>
            </div>
          ),
        }))}
      />
    </div>
  );
}
