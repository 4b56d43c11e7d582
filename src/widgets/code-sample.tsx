// `code-sample`: a ready-to-run request against a URL from the record (e.g. a JSON-RPC endpoint),
// for curl and JavaScript, with a copy button. Options: { url: pointer, method?: string }.
import { Tabs, Typography } from "antd";
import { type CustomViewProps, registerWidget } from "../../renderer/index.ts";

function valueAt(data: unknown, pointer: string): string {
  const value = pointer
    .split("/")
    .slice(1)
    .reduce<unknown>(
      (current, key) =>
        current && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined,
      data,
    );
  return value === undefined || value === null ? "" : String(value);
}

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

function CodeSample({ data, options }: CustomViewProps) {
  const url = valueAt(data, typeof options.url === "string" ? options.url : "/url");
  const method = typeof options.method === "string" ? options.method : "eth_blockNumber";
  if (!url) return <Typography.Text type="secondary">No URL to show yet.</Typography.Text>;
  return (
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
}

registerWidget("code-sample", { view: CodeSample });
