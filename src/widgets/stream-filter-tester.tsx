// `stream-filter-tester`: edit a stream's or webhook's filter, start from a template of its network,
// run it on a real block and see the result, its size, the run's duration, its error and its log
// lines. The record (a stream or webhook) gives the network, dataset, version and saved filter.
// Options (each operation as `{ "query" }` or `{ "mutation" }`, so the registry serves it):
//   run          the test mutation, called with { input: { network, blockNumber, filterFunction, … } }
//   templates    a query taking $network and answering a list of { id, title, description, filterFunction, datasets }
//   latestBlock  a query taking $network and answering the chain tip
//   save         optional: the update mutation, called with { input: { id, filterFunction[, filterVersion] } }; `refresh` names queries
//   payload      a query taking $network, $blockNumber (and $dataset) answering { payload }: the editor's sample
//   dataset      the dataset when the record has none (webhooks)
//   withDataset, withVersion, withBatchSize  show those inputs (streams) and send them to `run`
import { Alert, Button, Card, Col, Descriptions, InputNumber, Row, Select, Space, Typography } from "antd";
import { useMemo, useState } from "react";
import { useOperation, useRefresh } from "../../renderer/data.tsx";
import {
  type CustomViewProps,
  can,
  enumLabel,
  errorMessage,
  useData,
  useFeedback,
  useLeaveGuard,
} from "../../renderer/index.ts";
import { GqlError } from "../../renderer/transport.ts";
import { FilterEditor } from "./filter-editor.tsx";
import {
  BlockPicker,
  FilterLogs,
  fieldOf,
  formatSize,
  JsonResult,
  LatestBlockError,
  operationOf,
  refreshOf,
  useLatestBlock,
  useRun,
} from "./stream-parts.tsx";

export const DATASETS = [
  "BLOCK",
  "BLOCK_WITH_RECEIPTS",
  "BLOCK_WITH_RECEIPTS_DEBUG_TRACE",
  "BLOCK_WITH_RECEIPTS_TRACE_BLOCK",
  "DEBUG_TRACE",
  "LOGS",
  "RECEIPTS",
  "TRACE_BLOCKS",
  "TRANSACTIONS",
];
const VERSIONS = ["V1", "V2", "V3", "V4", "V5"];

export const STARTER =
  "function main(stream) {\n  // stream.data holds one entry per block of the batch.\n  return stream.data;\n}\n";

interface Template {
  id: string;
  title: string;
  description: string;
  filterFunction: string;
  datasets: string[];
}

export interface TestResult {
  result?: unknown;
  logs: { level: string; message: string }[];
  size: number;
  durationMs?: number;
  error: string | null;
  errorKind?: string | null;
}

/** Builds the test mutation's input from what the form shows. */
export function testInput(
  state: {
    network: string;
    dataset: string;
    version: string;
    blockNumber: number;
    batchSize: number;
    code: string;
  },
  options: { withDataset?: boolean; withVersion?: boolean; withBatchSize?: boolean },
): Record<string, unknown> {
  const input: Record<string, unknown> = {
    network: state.network,
    blockNumber: state.blockNumber,
    filterFunction: state.code,
  };
  if (options.withDataset) input.dataset = state.dataset;
  if (options.withVersion) input.filterVersion = state.version;
  if (options.withBatchSize) input.batchSize = state.batchSize;
  return input;
}

export function FilterTester({ data, options }: CustomViewProps) {
  const { viewer, registry } = useData();
  const datasetSchema = registry.schemas.stream?.$defs?.dataset;
  const datasetLabel = (value: string) => enumLabel(datasetSchema, value);
  const { message } = useFeedback();
  const run = useRun();
  const refresh = useRefresh();
  const network = String(fieldOf(data, "network") ?? "");
  const id = fieldOf(data, "id");
  const saved = fieldOf(data, "filterFunction");
  const withDataset = options.withDataset === true;
  const withVersion = options.withVersion === true;
  const withBatchSize = options.withBatchSize === true;
  const runName = operationOf(options.run);
  const saveName = operationOf(options.save);
  const mayChange = can(viewer.userRole, "ADMIN");

  const [code, setCode] = useState<string>(typeof saved === "string" && saved ? saved : STARTER);
  const [dataset, setDataset] = useState<string>(String(fieldOf(data, "dataset") ?? "BLOCK"));
  const [version, setVersion] = useState<string>(String(fieldOf(data, "filterVersion") ?? "V5"));
  const [batchSize, setBatchSize] = useState<number>(1);
  const [blockNumber, setBlockNumber] = useState<number | null>(null);
  const [templateId, setTemplateId] = useState<string | undefined>();
  const [running, setRunning] = useState(false);
  const [saving, setSaving] = useState(false);
  const [result, setResult] = useState<TestResult | null>(null);
  const [runError, setRunError] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  const fixedDataset = typeof options.dataset === "string" ? options.dataset : undefined;
  const savedCode = typeof saved === "string" && saved ? saved : STARTER;
  // Unsaved edits of a filter that can be saved are not lost silently.
  useLeaveGuard(Boolean(saveName) && mayChange && code !== savedCode);

  const latest = useLatestBlock(operationOf(options.latestBlock), network);
  const block = blockNumber ?? latest.block ?? null;
  const templatesQuery = operationOf(options.templates);
  const templates = useOperation<Record<string, Template[]>>(network ? templatesQuery : null, { network });
  const templateList = useMemo(() => {
    const list = templates.data ? Object.values(templates.data)[0] : undefined;
    return Array.isArray(list) ? list : [];
  }, [templates.data]);
  const template = templateList.find((entry) => entry.id === templateId);

  function pickTemplate(next: string | undefined) {
    setTemplateId(next);
    const chosen = templateList.find((entry) => entry.id === next);
    if (!chosen) return;
    setCode(chosen.filterFunction);
    if (withDataset && chosen.datasets.length > 0 && !chosen.datasets.includes(dataset)) setDataset(chosen.datasets[0]);
  }

  async function test() {
    if (!runName || block === null) return;
    setRunning(true);
    setRunError(null);
    try {
      const answer = await run(runName, {
        input: testInput(
          { network, dataset, version, blockNumber: block, batchSize, code },
          {
            withDataset,
            withVersion,
            withBatchSize,
          },
        ),
      });
      setResult(Object.values(answer)[0] as TestResult);
    } catch (error) {
      setResult(null);
      setRunError(errorMessage(error));
    } finally {
      setRunning(false);
    }
  }

  async function save() {
    if (!saveName) return;
    setSaving(true);
    setSaveError(null);
    try {
      const input: Record<string, unknown> = { id, filterFunction: code };
      if (withVersion) input.filterVersion = version;
      await run(saveName, { input });
      message.success("Filter saved");
      await refresh(refreshOf(options.save));
    } catch (error) {
      // A filter that does not compile is refused with where the error is: shown on the editor.
      const fields = error instanceof GqlError ? error.fields.map((field) => field.message) : [];
      setSaveError(fields.length ? fields.join(" ") : errorMessage(error));
      message.error("The filter was not saved");
    } finally {
      setSaving(false);
    }
  }

  const noRole = mayChange ? undefined : "Testing and saving a filter needs the Admin role.";

  return (
    <Space orientation="vertical" size={16} style={{ width: "100%" }} data-widget="stream-filter-tester">
      <Space wrap size={12} align="end">
        <div>
          <Typography.Text type="secondary">Template</Typography.Text>
          <br />
          <Select
            aria-label="Template"
            allowClear
            placeholder={templates.error ? "Templates unavailable" : "Start from a template"}
            loading={templates.isLoading}
            value={templateId}
            onChange={pickTemplate}
            style={{ width: 220 }}
            options={templateList.map((entry) => ({ value: entry.id, label: entry.title }))}
          />
        </div>
        {withDataset ? (
          <div>
            <Typography.Text type="secondary">Dataset</Typography.Text>
            <br />
            <Select
              aria-label="Dataset"
              value={dataset}
              onChange={setDataset}
              style={{ width: 200 }}
              options={DATASETS.map((value) => ({ value, label: datasetLabel(value) }))}
            />
          </div>
        ) : null}
        {withVersion ? (
          <div>
            <Typography.Text type="secondary">Filter version</Typography.Text>
            <br />
            <Select
              aria-label="Filter version"
              value={version}
              onChange={setVersion}
              style={{ width: 100 }}
              options={VERSIONS.map((value) => ({ value, label: value }))}
            />
          </div>
        ) : null}
        <div>
          <Typography.Text type="secondary">Block</Typography.Text>
          <br />
          <BlockPicker value={block} onChange={setBlockNumber} latest={latest} />
        </div>
        {withBatchSize ? (
          <div>
            <Typography.Text type="secondary">Batch size</Typography.Text>
            <br />
            <InputNumber
              aria-label="Batch size"
              min={1}
              max={100}
              precision={0}
              value={batchSize}
              onChange={(next) => setBatchSize(typeof next === "number" ? next : 1)}
            />
          </div>
        ) : null}
        <Button
          type="primary"
          onClick={test}
          loading={running}
          // The name stays "Run" while antd's loading icon fades out (it would read "loading Run");
          // aria-busy says it is running.
          aria-label="Run"
          aria-busy={running}
          disabled={!mayChange || !runName || block === null || !code.trim()}
          title={noRole ?? (block === null ? "Choose a block first" : undefined)}
        >
          Run
        </Button>
        {saveName ? (
          <Button
            onClick={save}
            loading={saving}
            aria-label="Save filter"
            aria-busy={saving}
            disabled={!mayChange || code === savedCode}
            title={noRole}
          >
            Save filter
          </Button>
        ) : null}
      </Space>
      {noRole ? <Alert type="info" showIcon title={noRole} /> : null}
      {saveError ? <Alert type="error" showIcon title="The filter was not saved" description={saveError} /> : null}
      {template ? (
        <Typography.Text type="secondary">
          {template.description}
          {template.datasets.length ? ` Dataset: ${template.datasets.map(datasetLabel).join(", ")}.` : ""}
        </Typography.Text>
      ) : null}
      {templates.error ? <Alert type="warning" showIcon title={errorMessage(templates.error)} /> : null}
      <LatestBlockError error={latest.error} />
      <Row gutter={16}>
        <Col xs={24} xl={12}>
          <FilterEditor
            id="filter-tester-code"
            label="Filter function"
            value={code}
            onChange={(next) => {
              setCode(next ?? "");
              setSaveError(null);
            }}
            rows={18}
            network={network}
            dataset={withDataset ? dataset : fixedDataset}
            latestBlock={operationOf(options.latestBlock)}
            payload={operationOf(options.payload)}
            errors={saveError ? [saveError] : result?.error ? [result.error] : undefined}
            errorText={false}
          />
        </Col>
        <Col xs={24} xl={12}>
          <Card size="small" title="Result" data-testid="filter-result">
            {running ? (
              <Typography.Text type="secondary">Running the filter…</Typography.Text>
            ) : runError ? (
              <Alert type="error" showIcon title="The test did not run" description={runError} />
            ) : !result ? (
              <Typography.Text type="secondary">
                Choose a block and press Run to see what would be delivered.
              </Typography.Text>
            ) : (
              <Space orientation="vertical" size={12} style={{ width: "100%" }}>
                {result.error ? (
                  <Alert
                    type="error"
                    showIcon
                    title={
                      result.errorKind
                        ? `The filter failed: ${enumLabel(registry.schemas["function-activation"]?.properties?.errorKind, result.errorKind)}`
                        : "The filter failed"
                    }
                    description={result.error}
                  />
                ) : null}
                <Descriptions size="small" column={2}>
                  <Descriptions.Item label="Size">{formatSize(result.size)}</Descriptions.Item>
                  {typeof result.durationMs === "number" ? (
                    <Descriptions.Item label="Duration">{`${result.durationMs.toFixed(1)} ms`}</Descriptions.Item>
                  ) : null}
                </Descriptions>
                {result.error ? null : result.result === null ? (
                  <Typography.Text type="secondary">
                    The filter returned null: nothing would be delivered for this block.
                  </Typography.Text>
                ) : (
                  <JsonResult value={result.result} />
                )}
                <Typography.Text strong>Logs</Typography.Text>
                <FilterLogs logs={result.logs} />
              </Space>
            )}
          </Card>
        </Col>
      </Row>
    </Space>
  );
}
