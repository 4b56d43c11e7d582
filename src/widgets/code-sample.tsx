// `code-sample`: a ready-to-run request against a URL from the record (e.g. a JSON-RPC endpoint),
// for curl and JavaScript, with a copy button. Options: { url: pointer, method?: string,
// tokenRequired?: pointer to a boolean }. When a token is required, the sample's URL ends in a
// placeholder for it: tokens are shown only once, so the console cannot fill one in.
import { Alert, Tabs, Typography } from "antd";
import { type CustomViewProps, getPointer } from "../../renderer/index.ts";

function textAt(data: unknown, pointer: string): string {
  const value = getPointer(data, pointer);
  return value === undefined || value === null ? "" : String(value);
}

export const TOKEN_PLACEHOLDER = "YOUR_TOKEN";

export function samples(url: string, method: string): { key: string; label: string; code: string }[] {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] });
  return [
    {
      key: "curl",
      label: "cURL",
      code: `curl -X POST ${url} \\\n  -H "Content-Type: application/json" \\\n  --data '${body}'`,
    },
    {
      key: "js",
      label: "JavaScript",
      code: `const response = await fetch("${url}", {\n  method: "POST",\n  headers: { "Content-Type": "application/json" },\n  body: JSON.stringify(${JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] })}),\n});\nconsole.log(await response.json());`,
    },
  ];
}

export function CodeSample({ data, options }: CustomViewProps) {
  const baseUrl = textAt(data, typeof options.url === "string" ? options.url : "/url");
  const method = typeof options.method === "string" ? options.method : "eth_blockNumber";
  const tokenRequired = typeof options.tokenRequired === "string" && getPointer(data, options.tokenRequired) === true;
  if (!baseUrl) return <Typography.Text type="secondary">No URL to show yet.</Typography.Text>;
  const url = tokenRequired ? `${baseUrl.replace(/\/$/, "")}/${TOKEN_PLACEHOLDER}` : baseUrl;
  const tabs = (
    <Tabs
      size="small"
      items={samples(url, method).map((sample) => ({
        key: sample.key,
        label: sample.label,
        children: (
          <div className="np-code">
            <Typography.Paragraph copyable={{ text: sample.code }} style={{ margin: 0 }}>
              <pre>{sample.code}</pre>
            </Typography.Paragraph>
          </div>
        ),
      }))}
    />
  );
  if (!tokenRequired) return tabs;
  return (
    <>
      <Alert
        type="info"
        showIcon
        style={{ marginBottom: 12 }}
        title={`Token authentication is on: replace ${TOKEN_PLACEHOLDER} with one of this endpoint's tokens (Security tab). A token is shown once, when it is created.`}
      />
      {tabs}
    </>
  );
}
