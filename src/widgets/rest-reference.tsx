// `rest-reference`: the REST API's reference, read from its OpenAPI document at run time (options.document,
// a path of this service): operations by resource, each with its parameters, body and answers, a sample in
// cURL, JavaScript and Python, and "try it", which calls the API from the browser with a key the viewer
// picks from theirs (options.keys: a pointer to the query's keys) and pastes: a key's value is shown only
// when it is made, so the page never has it. The pasted key stays in this page's memory only.
import { Alert, Button, Collapse, Input, Select, Space, Tabs, Tag, Typography } from "antd";
import { useEffect, useMemo, useState } from "react";
import { type CustomViewProps, getPointer } from "../../renderer/index.ts";

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema?: Json;
  description?: string;
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  application?: string;
  parameters: Parameter[];
  example?: Json;
  hasBody: boolean;
  statuses: string[];
}

interface OpenApi {
  servers: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Json>>;
}

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  role: string;
  applications: string[];
  isActive: boolean;
}

const METHOD_COLORS: Record<string, string> = {
  GET: "blue",
  POST: "green",
  PUT: "orange",
  PATCH: "gold",
  DELETE: "red",
};

/** Every operation of the document, in its order, with what the reference and the samples need. */
export function operationsOf(document: OpenApi): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const body = (op.requestBody as { content?: Record<string, { example?: Json }> } | undefined)?.content?.[
        "application/json"
      ];
      return {
        method: method.toUpperCase(),
        path,
        operationId: String(op.operationId),
        summary: String(op.summary ?? ""),
        tag: String((op.tags as string[] | undefined)?.[0] ?? ""),
        application: op["x-application"] as string | undefined,
        parameters: (op.parameters as Parameter[] | undefined) ?? [],
        example: body?.example,
        hasBody: body !== undefined,
        statuses: Object.keys((op.responses as Json | undefined) ?? {}),
      };
    }),
  );
}

/** The samples of one call: cURL, JavaScript (fetch) and Python (requests), with the key as a placeholder. */
export function samplesOf(url: string, method: string, body: string | undefined, needsKey: boolean) {
  const key = "$NODEPLANE_API_KEY";
  const curl = [
    `curl -X ${method} '${url}'`,
    ...(needsKey ? [`  -H "x-api-key: ${key}"`] : []),
    ...(body ? ["  -H 'content-type: application/json'", `  -d '${body.replace(/'/g, "'\\''")}'`] : []),
  ].join(" \\\n");
  const jsHeaders = [
    ...(needsKey ? ['"x-api-key": process.env.NODEPLANE_API_KEY'] : []),
    ...(body ? ['"content-type": "application/json"'] : []),
  ];
  const javascript = `const response = await fetch("${url}", {\n  method: "${method}",\n  headers: { ${jsHeaders.join(", ")} },${
    body ? `\n  body: JSON.stringify(${body}),` : ""
  }\n});\nconsole.log(response.status, response.status === 204 ? "" : await response.json());`;
  const python = `import os\nimport requests\n\nresponse = requests.request(\n    "${method}",\n    "${url}",\n    headers={${
    needsKey ? '"x-api-key": os.environ["NODEPLANE_API_KEY"]' : ""
  }},${body ? `\n    json=${pythonLiteral(body)},` : ""}\n)\nprint(response.status_code, response.text)`;
  return [
    { key: "curl", label: "cURL", code: curl },
    { key: "javascript", label: "JavaScript", code: javascript },
    { key: "python", label: "Python", code: python },
  ];
}

/** JSON as a Python literal (true/false/null spelled as Python spells them). */
function pythonLiteral(json: string): string {
  return json.replace(/("(?:[^"\\]|\\.)*")|\btrue\b|\bfalse\b|\bnull\b/g, (match, quoted) =>
    quoted ? quoted : match === "true" ? "True" : match === "false" ? "False" : "None",
  );
}

function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div className="np-code">
      <Typography.Paragraph
        copyable={{ text: code, tooltips: [`Copy the ${label} sample`, "Copied"] }}
        style={{ margin: 0 }}
      >
        <pre>{code}</pre>
      </Typography.Paragraph>
    </div>
  );
}

interface TryResult {
  status: number;
  headers: string;
  body: string;
}

function OperationPanel({
  op,
  base,
  apiKey,
  needsKey,
}: {
  op: Operation;
  base: string;
  apiKey: string;
  needsKey: boolean;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [body, setBody] = useState(op.example ? JSON.stringify(op.example, null, 2) : op.hasBody ? "{}" : "");
  const [result, setResult] = useState<TryResult | null>(null);
  const [sending, setSending] = useState(false);
  const pathParams = op.parameters.filter((p) => p.in === "path");
  const queryParams = op.parameters.filter((p) => p.in === "query");

  const filled = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    values[name] ? encodeURIComponent(values[name]) : `{${name}}`,
  );
  const query = new URLSearchParams(
    queryParams.flatMap((p) => (values[p.name] ? [[p.name, values[p.name]] as [string, string]] : [])),
  ).toString();
  const url = `${window.location.origin}${base}${filled}${query ? `?${query}` : ""}`;
  const compactBody = op.hasBody ? JSON.stringify(op.example ?? {}) : undefined;

  async function send() {
    setSending(true);
    try {
      const headers: Record<string, string> = {};
      if (needsKey) headers["x-api-key"] = apiKey;
      if (op.hasBody) headers["content-type"] = "application/json";
      const response = await fetch(url, { method: op.method, headers, body: op.hasBody ? body : undefined });
      const text = await response.text();
      let shown = text;
      try {
        shown = text ? JSON.stringify(JSON.parse(text), null, 2) : "";
      } catch {
        // Not JSON: shown as it came.
      }
      const kept = [
        "content-type",
        "etag",
        "link",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "retry-after",
      ];
      setResult({
        status: response.status,
        headers: kept
          .flatMap((name) => (response.headers.get(name) ? [`${name}: ${response.headers.get(name)}`] : []))
          .join("\n"),
        body: shown,
      });
    } catch (error) {
      setResult({ status: 0, headers: "", body: error instanceof Error ? error.message : String(error) });
    } finally {
      setSending(false);
    }
  }

  return (
    <div data-operation={op.operationId}>
      {op.application ? (
        <Typography.Paragraph type="secondary">
          Takes a key made for <Tag>{op.application}</Tag>
          {op.method === "GET" ? "(a viewer key may read)." : "with the ADMIN role."}
        </Typography.Paragraph>
      ) : null}
      {op.parameters.length ? (
        <Space orientation="vertical" style={{ width: "100%", marginBottom: 12 }}>
          {[...pathParams, ...queryParams].map((p) => (
            <Input
              key={p.name}
              prefix={
                <span className="np-rest-param">
                  {p.name}
                  {p.required ? " *" : ""}
                </span>
              }
              placeholder={`${p.in} · ${String(p.schema?.type ?? "string")}${p.schema?.enum ? `: ${(p.schema.enum as string[]).join(", ")}` : ""}`}
              value={values[p.name] ?? ""}
              onChange={(event) => setValues({ ...values, [p.name]: event.target.value })}
              aria-label={`${op.operationId} ${p.name}`}
            />
          ))}
        </Space>
      ) : null}
      {op.hasBody ? (
        <Input.TextArea
          className="np-rest-body"
          autoSize={{ minRows: 3, maxRows: 14 }}
          value={body}
          onChange={(event) => setBody(event.target.value)}
          aria-label={`${op.operationId} body`}
          style={{ fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", marginBottom: 12 }}
        />
      ) : null}
      <Space wrap style={{ marginBottom: 12 }}>
        <Button type="primary" onClick={send} loading={sending} disabled={needsKey && !apiKey} data-action="try-it">
          Try it
        </Button>
        <Typography.Text type="secondary">Answers: {op.statuses.join(", ")}</Typography.Text>
      </Space>
      {result ? (
        <div data-result={result.status} style={{ marginBottom: 12 }}>
          <Tag color={result.status >= 200 && result.status < 300 ? "green" : result.status === 304 ? "blue" : "red"}>
            {result.status || "failed"}
          </Tag>
          {result.headers ? <pre className="np-rest-headers">{result.headers}</pre> : null}
          {result.body ? <CodeBlock code={result.body} label="answer" /> : null}
        </div>
      ) : null}
      <Tabs
        size="small"
        className="np-sample-tabs"
        items={samplesOf(url, op.method, compactBody, needsKey).map((sample) => ({
          key: sample.key,
          label: sample.label,
          children: <CodeBlock code={sample.code} label={sample.label} />,
        }))}
      />
    </div>
  );
}

export function RestReference({ data, options }: CustomViewProps) {
  const documentPath = typeof options.document === "string" ? options.document : "";
  const [document, setDocument] = useState<OpenApi | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [pickedKey, setPickedKey] = useState<string | undefined>();
  const [apiKey, setApiKey] = useState("");
  const keys = ((typeof options.keys === "string" ? getPointer(data, options.keys) : null) as KeyRow[] | null) ?? [];
  const activeKeys = keys.filter((k) => k.isActive);

  useEffect(() => {
    let live = true;
    fetch(documentPath)
      .then(async (response) => {
        if (!response.ok) throw new Error(`The API's document answered ${response.status}.`);
        return (await response.json()) as OpenApi;
      })
      .then((loaded) => live && setDocument(loaded))
      .catch((error: Error) => live && setFailed(error.message));
    return () => {
      live = false;
    };
  }, [documentPath]);

  const operations = useMemo(() => (document ? operationsOf(document) : []), [document]);
  const picked = activeKeys.find((k) => k.id === pickedKey);
  const keyMismatch = Boolean(picked && apiKey && !apiKey.startsWith(picked.prefix));

  if (failed) return <Alert type="error" showIcon title={failed} />;
  if (!document) return <Typography.Text type="secondary">Loading the API's reference…</Typography.Text>;
  const base = document.servers[0]?.url ?? "";

  return (
    <div data-widget="rest-reference">
      <Typography.Paragraph>
        Base URL <Typography.Text code copyable>{`${window.location.origin}${base}`}</Typography.Text> · the OpenAPI 3.1
        document: <Typography.Link href={documentPath}>{documentPath}</Typography.Link>
      </Typography.Paragraph>
      <div className="np-rest-key">
        <Select
          style={{ minWidth: 260 }}
          placeholder={activeKeys.length ? "Pick one of your keys" : "No active key: make one on API keys"}
          value={pickedKey}
          onChange={setPickedKey}
          aria-label="Key to try with"
          options={activeKeys.map((k) => ({
            value: k.id,
            label: `${k.name} · ${k.prefix}… · ${k.role}`,
          }))}
        />
        <Input.Password
          style={{ flex: 1, minWidth: 220 }}
          placeholder="Paste the key's value (shown once when it was made)"
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value.trim())}
          aria-label="API key"
          autoComplete="off"
        />
      </div>
      {keyMismatch ? (
        <Alert type="warning" showIcon style={{ marginBottom: 12 }} title="This value is not the key you picked." />
      ) : null}
      {picked ? (
        <Typography.Paragraph type="secondary">
          Made for{" "}
          {picked.applications.map((a) => (
            <Tag key={a}>{a}</Tag>
          ))}
          : other resources refuse it (403).
        </Typography.Paragraph>
      ) : null}
      {document.tags.map((tag) => {
        const ofTag = operations.filter((op) => op.tag === tag.name);
        if (!ofTag.length) return null;
        return (
          <section key={tag.name} className="np-rest-tag" data-tag={tag.name}>
            <Typography.Title level={2} className="np-rest-tag-title">
              {tag.name}
            </Typography.Title>
            {tag.description ? <Typography.Paragraph type="secondary">{tag.description}</Typography.Paragraph> : null}
            <Collapse
              size="small"
              items={ofTag.map((op) => ({
                key: op.operationId,
                label: (
                  <span className="np-rest-op">
                    <Tag color={METHOD_COLORS[op.method]} style={{ minWidth: 58, textAlign: "center" }}>
                      {op.method}
                    </Tag>
                    <Typography.Text code>{op.path}</Typography.Text>{" "}
                    <span className="np-rest-summary">{op.summary}</span>
                  </span>
                ),
                children: (
                  <OperationPanel op={op} base={base} apiKey={apiKey} needsKey={op.application !== undefined} />
                ),
              }))}
            />
          </section>
        );
      })}
    </div>
  );
}
