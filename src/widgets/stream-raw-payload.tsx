// `stream-raw-payload`: a block of the record's network as a filter receives it, before filtering,
// with its size. The record (a stream or webhook) gives the network (and, for streams, the dataset).
// Options: payload (a query taking $network, $blockNumber[, $dataset, $batchSize] and answering
// { payload, size }), latestBlock (a query taking $network).
import { Alert, Button, Descriptions, Space, Typography } from "antd";
import { useState } from "react";
import { type CustomViewProps, errorMessage } from "../../renderer/index.ts";
import {
  BlockPicker,
  fieldOf,
  formatSize,
  JsonResult,
  LatestBlockError,
  operationOf,
  useLatestBlock,
  useRun,
} from "./stream-parts.tsx";

export function RawPayload({ data, options }: CustomViewProps) {
  const run = useRun();
  const network = String(fieldOf(data, "network") ?? "");
  const dataset = fieldOf(data, "dataset");
  const payloadName = operationOf(options.payload);
  const latest = useLatestBlock(operationOf(options.latestBlock), network);
  const [blockNumber, setBlockNumber] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const [answer, setAnswer] = useState<{ payload: unknown; size: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const block = blockNumber ?? latest.block ?? null;

  async function show() {
    if (!payloadName || block === null) return;
    setLoading(true);
    setError(null);
    try {
      const variables: Record<string, unknown> = { network, blockNumber: block };
      if (typeof dataset === "string") variables.dataset = dataset;
      const result = await run(payloadName, variables);
      setAnswer(Object.values(result)[0] as { payload: unknown; size: number });
    } catch (failure) {
      setAnswer(null);
      setError(errorMessage(failure));
    } finally {
      setLoading(false);
    }
  }

  return (
    <Space orientation="vertical" size={16} style={{ width: "100%" }} data-widget="stream-raw-payload">
      <Space wrap align="end">
        <BlockPicker value={block} onChange={setBlockNumber} latest={latest} />
        <Button
          type="primary"
          onClick={show}
          loading={loading}
          aria-label="Show payload"
          aria-busy={loading}
          disabled={block === null}
        >
          Show payload
        </Button>
        <Typography.Text type="secondary">{`Network: ${network}`}</Typography.Text>
      </Space>
      <LatestBlockError error={latest.error} />
      {error ? <Alert type="error" showIcon title="Cannot read this block" description={error} /> : null}
      {answer ? (
        <>
          <Descriptions size="small" column={2}>
            <Descriptions.Item label="Block">{block}</Descriptions.Item>
            <Descriptions.Item label="Size">{formatSize(answer.size)}</Descriptions.Item>
          </Descriptions>
          <JsonResult value={answer.payload} />
        </>
      ) : null}
    </Space>
  );
}
