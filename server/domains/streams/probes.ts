import type { Upstream } from "../../dataplane/chain/nodes.ts";
import {
  type DatasetAvailability,
  EVM_DATASETS,
  type EvmDataset,
  probeDatasets,
} from "../../dataplane/datasets/reader.ts";

const PROBE_TIMEOUT_MS = 3000;
const PROBE_TTL_MS = 5 * 60_000;
/** A node that could not be reached is asked again sooner. */
const FAILED_PROBE_TTL_MS = 30_000;

export type Probe = Record<EvmDataset, DatasetAvailability>;

/**
 * Which datasets each chain node serves, probed once per network and node URL and kept for a while;
 * concurrent callers share one probe. One per service, made where it is put together (the streams
 * runtime), so what one caller learned of a node serves the next.
 */
export class DatasetProbes {
  private readonly probes = new Map<string, { until: number; result: Promise<Probe> }>();

  of(upstream: Upstream): Promise<Probe> {
    const key = `${upstream.network} ${upstream.httpUrl}`;
    const cached = this.probes.get(key);
    if (cached && cached.until > Date.now()) return cached.result;
    const entry = {
      until: Date.now() + PROBE_TTL_MS,
      result: probeDatasets(upstream.httpUrl, { timeoutMs: PROBE_TIMEOUT_MS, connections: 1 }).catch((e: unknown) => {
        entry.until = Date.now() + FAILED_PROBE_TTL_MS;
        const reason = `the ${upstream.network} node could not be reached: ${(e as Error).message}`;
        return Object.fromEntries(EVM_DATASETS.map((d) => [d, { available: false, reason }])) as Probe;
      }),
    };
    this.probes.set(key, entry);
    return entry.result;
  }
}
