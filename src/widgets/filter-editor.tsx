// `filter-editor`: the one filter editor of streams and webhooks (create and settings forms, and the
// Filter tab's tester). The code area, and beside it the dataset's shape and a sample read from a real
// block of the chosen network (its latest), so a filter is written against what it will receive.
// `ui:options` (each operation as `{ "query" }`, so the registry serves it):
//   latestBlock  a query taking $network and answering the chain tip
//   payload      a query taking $network, $blockNumber (and $dataset, $batchSize) answering { payload }
//   dataset      the dataset when the form has no dataset field (webhooks: BLOCK_WITH_RECEIPTS)
//   rows         the code area's rows
import type { WidgetProps } from "@rjsf/utils";
import { Alert, Button, Collapse, Space, Tabs, Typography } from "antd";
import { useCallback, useEffect, useState } from "react";
import { errorMessage, useRecordFormat } from "../../renderer/index.ts";
import { CodeArea, errorLineOf } from "./code-editor.tsx";
import { JsonResult, operationOf, useRun } from "./stream-parts.tsx";

/** How deep the shape goes, and how many keys of one object it lists. */
const SHAPE_DEPTH = 4;
const SHAPE_KEYS = 40;

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "string" && /^0x[0-9a-f]*$/i.test(value)) return value.length > 18 ? "hex string" : "hex number";
  return typeof value;
}

/**
 * The shape of a value as indented lines (`name: type`), arrays described by their first item, e.g.
 * `stream.data: array (1)` then `  [0]: object` then `    block: object`…
 */
export function describeShape(value: unknown, name: string, depth = 0): string[] {
  const indent = "  ".repeat(depth);
  const kind = kindOf(value);
  if (Array.isArray(value)) {
    const lines = [`${indent}${name}: array (${value.length})`];
    if (value.length > 0 && depth < SHAPE_DEPTH) lines.push(...describeShape(value[0], "[0]", depth + 1));
    return lines;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const lines = [`${indent}${name}: object`];
    if (depth >= SHAPE_DEPTH) return lines;
    for (const [key, inner] of entries.slice(0, SHAPE_KEYS)) lines.push(...describeShape(inner, key, depth + 1));
    if (entries.length > SHAPE_KEYS) lines.push(`${indent}  … ${entries.length - SHAPE_KEYS} more`);
    return lines;
  }
  return [`${indent}${name}: ${kind}`];
}

interface SampleState {
  loading: boolean;
  block?: number;
  payload?: unknown;
  error?: string;
}

/** The dataset's shape and a sample from the network's latest block. */
export function DatasetSample(props: {
  network: string | undefined;
  dataset: string | undefined;
  latestBlock: string | undefined;
  payload: string | undefined;
}) {
  const { network, dataset, latestBlock, payload } = props;
  const run = useRun();
  // The dataset and network by their labels, as the stream's own fields show them.
  const formatStream = useRecordFormat("stream");
  const [state, setState] = useState<SampleState>({ loading: false });
  const load = useCallback(async () => {
    if (!network || !dataset || !latestBlock || !payload) return;
    setState({ loading: true });
    try {
      const tip = Number(Object.values(await run(latestBlock, { network }))[0]);
      const answer = Object.values(await run(payload, { network, dataset, blockNumber: tip, batchSize: 1 }))[0] as {
        payload: unknown;
      };
      setState({ loading: false, block: tip, payload: answer.payload });
    } catch (error) {
      setState({ loading: false, error: errorMessage(error) });
    }
  }, [run, network, dataset, latestBlock, payload]);
  useEffect(() => {
    void load();
  }, [load]);

  if (!network || !dataset)
    return (
      <Typography.Text type="secondary">Choose a network and dataset to see what the filter receives.</Typography.Text>
    );
  if (state.error)
    return (
      <Alert
        type="warning"
        showIcon
        title="Could not read a sample block"
        description={state.error}
        action={
          <Button size="small" onClick={() => void load()}>
            Retry
          </Button>
        }
      />
    );
  if (state.loading || state.payload === undefined)
    return (
      <Typography.Text type="secondary">
        Reading the latest block of {formatStream(network, "network")}…
      </Typography.Text>
    );
  return (
    <Space orientation="vertical" size={8} style={{ width: "100%" }} data-testid="dataset-sample">
      <Space wrap size={8}>
        <Typography.Text type="secondary">
          {`${formatStream(dataset, "dataset")} of ${formatStream(network, "network")}, block ${state.block?.toLocaleString("en")}: main(stream) receives it as stream.data (one entry per block of the batch).`}
        </Typography.Text>
        <Button size="small" onClick={() => void load()}>
          Read a newer block
        </Button>
      </Space>
      <Tabs
        size="small"
        items={[
          {
            key: "shape",
            label: "Shape",
            children: (
              <pre className="np-dataset-shape" style={{ maxHeight: 320, overflow: "auto", fontSize: 12.5, margin: 0 }}>
                {describeShape(state.payload, "stream.data").join("\n")}
              </pre>
            ),
          },
          { key: "sample", label: "Sample", children: <JsonResult value={state.payload} /> },
        ]}
      />
    </Space>
  );
}

export interface FilterEditorProps {
  id: string;
  value: string;
  onChange: (next: string | undefined) => void;
  network: string | undefined;
  dataset: string | undefined;
  latestBlock: string | undefined;
  payload: string | undefined;
  rows?: number;
  label?: string;
  placeholder?: string;
  disabled?: boolean;
  /** Messages of a compile or run error: the field shows it in red and its line is marked. */
  errors?: string[];
  /** Whether the messages are said under the code (default); false where the screen says them already. */
  errorText?: boolean;
  describedBy?: string;
  /** Whether the sample starts open. */
  sampleOpen?: boolean;
}

export function FilterEditor(props: FilterEditorProps) {
  return (
    <Space orientation="vertical" size={8} style={{ width: "100%" }} data-widget="filter-editor">
      <CodeArea
        id={props.id}
        value={props.value}
        onChange={props.onChange}
        rows={props.rows ?? 12}
        label={props.label}
        placeholder={props.placeholder}
        disabled={props.disabled}
        invalid={Boolean(props.errors?.length)}
        errorLine={errorLineOf(props.errors)}
        describedBy={props.describedBy}
      />
      {/* The form shows its help text in place of a field's errors: where the error is, is said here. */}
      {props.errors?.length && props.errorText !== false ? (
        <Typography.Text type="danger" role="alert" data-testid="filter-error">
          {props.errors.join(" ")}
        </Typography.Text>
      ) : null}
      <Collapse
        size="small"
        defaultActiveKey={props.sampleOpen ? ["sample"] : []}
        items={[
          {
            key: "sample",
            label: "What the filter receives: the dataset's shape and a sample block",
            children: (
              <DatasetSample
                network={props.network}
                dataset={props.dataset}
                latestBlock={props.latestBlock}
                payload={props.payload}
              />
            ),
          },
        ]}
      />
    </Space>
  );
}

export function FilterEditorWidget(props: WidgetProps) {
  const formData = (props.registry.formContext as { formData?: Record<string, unknown> } | undefined)?.formData ?? {};
  const { options } = props;
  const network = typeof formData.network === "string" && formData.network ? formData.network : undefined;
  const fixed = typeof options.dataset === "string" ? options.dataset : undefined;
  const dataset = fixed ?? (typeof formData.dataset === "string" && formData.dataset ? formData.dataset : undefined);
  return (
    <FilterEditor
      id={props.id}
      value={typeof props.value === "string" ? props.value : ""}
      onChange={props.onChange}
      network={network}
      dataset={dataset}
      latestBlock={operationOf(options.latestBlock)}
      payload={operationOf(options.payload)}
      rows={Number(options.rows) || 12}
      label={props.label}
      placeholder={props.placeholder}
      disabled={props.disabled || props.readonly}
      errors={props.rawErrors}
      describedBy={`${props.id}__description`}
    />
  );
}
