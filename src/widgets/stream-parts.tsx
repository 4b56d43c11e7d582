// Parts shared by the stream and webhook widgets: a block picker with a "Latest" button, a JSON result
// with its size, and filter log lines coloured by level. Operations are named by the manifest's
// options (`{ "query": "…" }` / `{ "mutation": "…" }`), so the registry serves their documents.
import { Alert, Button, InputNumber, Space, Typography } from "antd";
import { useCallback, useEffect, useState } from "react";
import { formatBytes } from "../../renderer/format.ts";
import { errorMessage, type LogLine, LogLines, useData } from "../../renderer/index.ts";

/** The operation name of an option shaped `{ query }` or `{ mutation }`. */
export function operationOf(option: unknown): string | undefined {
  if (!option || typeof option !== "object") return undefined;
  const { query, mutation } = option as { query?: unknown; mutation?: unknown };
  const name = query ?? mutation;
  return typeof name === "string" ? name : undefined;
}

export function refreshOf(option: unknown): string[] {
  const refresh = option && typeof option === "object" ? (option as { refresh?: unknown }).refresh : undefined;
  return Array.isArray(refresh) ? refresh.filter((name): name is string => typeof name === "string") : [];
}

export function fieldOf(record: unknown, key: string): unknown {
  return record && typeof record === "object" ? (record as Record<string, unknown>)[key] : undefined;
}

/** Runs a named operation from the registry once, outside SWR (a test run, a block lookup). */
export function useRun() {
  const { transport, registry } = useData();
  return useCallback(
    async (name: string, variables: Record<string, unknown>) => {
      const document = registry.operations[name];
      if (!document) throw new Error(`The operation ${name} is not available to you.`);
      return transport(document, variables);
    },
    [transport, registry],
  );
}

/**
 * The chain tip of a network from a named query answering one number (e.g. streamLatestBlock).
 * Loaded once on mount and again on demand; its error is kept, since a network without a connected
 * node answers UPSTREAM_FAILED and the screen must say so.
 */
export function useLatestBlock(query: string | undefined, network: string | undefined) {
  const run = useRun();
  const [state, setState] = useState<{ block?: number; error?: string; loading: boolean }>({ loading: false });
  const load = useCallback(async () => {
    if (!query || !network) return undefined;
    setState((current) => ({ ...current, loading: true }));
    try {
      const data = await run(query, { network });
      const block = Object.values(data)[0];
      const value = typeof block === "number" ? block : Number(block);
      setState({ block: value, loading: false });
      return value;
    } catch (error) {
      setState({ error: errorMessage(error), loading: false });
      return undefined;
    }
  }, [run, query, network]);
  useEffect(() => {
    void load();
  }, [load]);
  return { ...state, load };
}

export function BlockPicker(props: {
  value: number | null;
  onChange: (value: number | null) => void;
  latest: ReturnType<typeof useLatestBlock>;
}) {
  const { value, onChange, latest } = props;
  return (
    <Space.Compact>
      <InputNumber
        aria-label="Block number"
        min={0}
        precision={0}
        placeholder="Block number"
        value={value}
        onChange={(next) => onChange(typeof next === "number" ? next : null)}
        style={{ width: 160 }}
      />
      <Button
        loading={latest.loading}
        // Keeps the name while antd's loading icon fades out; aria-busy says it is loading.
        aria-label="Latest"
        aria-busy={latest.loading}
        onClick={async () => {
          const block = await latest.load();
          if (block !== undefined) onChange(block);
        }}
      >
        Latest
      </Button>
    </Space.Compact>
  );
}

export function LatestBlockError({ error }: { error?: string }) {
  if (!error) return null;
  return <Alert type="error" showIcon title="Cannot read the chain" description={error} />;
}

export function FilterLogs({ logs }: { logs: LogLine[] }) {
  const { registry } = useData();
  return (
    <LogLines
      logs={logs}
      emptyText="The filter logged nothing."
      levelSchema={registry.schemas["stream-log"]?.$defs?.level}
    />
  );
}

/** Above this many characters the JSON is cut, with a copy of the whole. */
const SHOWN_CHARS = 200_000;

export function JsonResult({ value }: { value: unknown }) {
  const text = value === undefined ? "" : JSON.stringify(value, null, 2);
  const shown = text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}\n… (cut; copy to get all of it)` : text;
  return (
    <div className="np-code" data-testid="json-result">
      <Typography.Paragraph copyable={{ text }} style={{ margin: 0 }}>
        <pre style={{ maxHeight: 420, overflow: "auto" }}>{shown === "" ? "null" : shown}</pre>
      </Typography.Paragraph>
    </div>
  );
}

/** A payload's size as the console reads bytes, with the exact count beside it once scaled. */
export function formatSize(bytes: number): string {
  const read = formatBytes(bytes);
  return bytes < 1024 ? read : `${read} (${bytes.toLocaleString("en")} B)`;
}
