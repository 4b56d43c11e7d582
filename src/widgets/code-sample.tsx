// `code-sample`: how to call a JSON-RPC endpoint: its HTTP and WebSocket URLs, each with a copy
// button, the active security methods in words, and ready-to-run samples for cURL, viem, ethers,
// web3.py and a WebSocket subscription. Options: { url: pointer (HTTP URL), wssUrl?: pointer,
// method?: string (cURL's method), tokenRequired?: pointer to a boolean, token?: pointer to the
// endpoint's first token, security?: pointer to the endpoint's security settings }.
// The request itself (URL, headers, placeholders) is built by first-request.ts, which the API test
// runs against a real endpoint, so a copied sample with its placeholders filled gets an answer.
import { Alert, Tabs, Typography } from "antd";
import { type CustomViewProps, getPointer } from "../../renderer/index.ts";
import { curlOf, type FirstRequest, firstRequest, type SampleSecurity } from "./first-request.ts";

function textAt(data: unknown, pointer: unknown): string {
  if (typeof pointer !== "string") return "";
  const value = getPointer(data, pointer);
  return value === undefined || value === null ? "" : String(value);
}

export interface Sample {
  key: string;
  label: string;
  code: string;
}

/** The samples for a first request (and a WebSocket subscription, when the endpoint has a WebSocket URL). */
export function samples(request: FirstRequest): Sample[] {
  const { url, wssUrl } = request;
  const extra = request.headers.filter(([name]) => name !== "Content-Type");
  const jsHeaders = `{ ${extra.map(([name, value]) => `"${name}": "${value}"`).join(", ")} }`;
  const http: Sample[] = [
    { key: "curl", label: "cURL", code: curlOf(request) },
    {
      key: "viem",
      label: "viem",
      code: extra.length
        ? `import { createPublicClient, http } from "viem";\n\nconst client = createPublicClient({\n  transport: http("${url}", { fetchOptions: { headers: ${jsHeaders} } }),\n});\nconsole.log(await client.getBlockNumber());`
        : `import { createPublicClient, http } from "viem";\n\nconst client = createPublicClient({ transport: http("${url}") });\nconsole.log(await client.getBlockNumber());`,
    },
    {
      key: "ethers",
      label: "ethers",
      code: extra.length
        ? `import { FetchRequest, JsonRpcProvider } from "ethers";\n\nconst request = new FetchRequest("${url}");\n${extra.map(([name, value]) => `request.setHeader("${name}", "${value}");`).join("\n")}\nconst provider = new JsonRpcProvider(request);\nconsole.log(await provider.getBlockNumber());`
        : `import { JsonRpcProvider } from "ethers";\n\nconst provider = new JsonRpcProvider("${url}");\nconsole.log(await provider.getBlockNumber());`,
    },
    {
      key: "web3py",
      label: "web3.py",
      code: extra.length
        ? `from web3 import Web3\n\nheaders = {${extra.map(([name, value]) => `"${name}": "${value}"`).join(", ")}}\nw3 = Web3(Web3.HTTPProvider("${url}", request_kwargs={"headers": headers}))\nprint(w3.eth.block_number)`
        : `from web3 import Web3\n\nw3 = Web3(Web3.HTTPProvider("${url}"))\nprint(w3.eth.block_number)`,
    },
  ];
  if (!wssUrl) return http;
  const subscribe = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] });
  // A browser's WebSocket cannot set headers (it sends its own Origin); Node's can.
  const socket = extra.length
    ? `// A new block's header as each block arrives (Node.js 22+; a browser cannot set these headers).\nconst socket = new WebSocket("${wssUrl}", { headers: ${jsHeaders} });`
    : `// A new block's header as each block arrives (Node.js 22+ or a browser).\nconst socket = new WebSocket("${wssUrl}");`;
  return [
    ...http,
    {
      key: "websocket",
      label: "WebSocket",
      code: `${socket}\nsocket.onopen = () => socket.send('${subscribe}');\nsocket.onmessage = (event) => console.log(JSON.parse(event.data));`,
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
  const token = textAt(data, options.token);
  const method = typeof options.method === "string" ? options.method : "eth_blockNumber";
  const tokenRequired = typeof options.tokenRequired === "string" && getPointer(data, options.tokenRequired) === true;
  const security =
    typeof options.security === "string" ? (getPointer(data, options.security) as SampleSecurity | null) : null;
  if (!baseUrl) return <Typography.Text type="secondary">No URL to show yet.</Typography.Text>;
  const request = firstRequest({
    url: baseUrl,
    wssUrl: textAt(data, options.wssUrl),
    method,
    token,
    tokenRequired,
    security,
  });
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
      ) : request.active.length ? (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 12 }}
          title={
            request.active.length === 1 && request.active[0].key === "token"
              ? `Token authentication is on: ${request.active[0].text}`
              : `Security on this endpoint: ${request.active.map((m) => m.label).join(", ")}. Fill in the placeholders before you run a sample.`
          }
          description={
            request.active.length === 1 && request.active[0].key === "token" ? undefined : (
              <ul className="np-active-security" style={{ margin: 0, paddingLeft: 18 }}>
                {request.active.map((m) => (
                  <li key={m.key} data-security={m.key}>
                    {m.text}
                  </li>
                ))}
              </ul>
            )
          }
        />
      ) : (
        <Typography.Paragraph type="secondary" data-security="none">
          No security method is on: anyone with the URL can call this endpoint.
        </Typography.Paragraph>
      )}
      <div className="np-urls">
        <UrlRow label="HTTP URL" url={request.url} kind="http" />
        {request.wssUrl ? <UrlRow label="WebSocket URL" url={request.wssUrl} kind="wss" /> : null}
      </div>
      <Tabs
        size="small"
        className="np-sample-tabs"
        items={samples(request).map((sample) => ({
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
