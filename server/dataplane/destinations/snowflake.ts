import type snowflake from "snowflake-sdk";
import type { EgressPolicy } from "../../platform/egress.ts";
import { errorMessage, isEgressRefusal } from "./common.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type SnowflakeAttributes,
  type TestResult,
} from "./types.ts";

/**
 * Inserts one row per batch into `database.schema.tableName` (created when absent: stream_id,
 * network, dataset, block_start, block_end, is_reorg, data VARIANT, received_at) through the official
 * driver. Connecting has a hard deadline of its own (the driver retries logins for minutes), so test()
 * and deliver() end with a clear reason rather than hang. test() connects and runs
 * `SELECT CURRENT_ROLE()`; it writes nothing.
 */
const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,254}$/;
const CONNECT_DEADLINE_MS = 15_000;

let driver: Promise<typeof snowflake> | undefined;

/** The driver, loaded with the first Snowflake connection: importing it takes seconds every start would pay. */
function snowflakeDriver(): Promise<typeof snowflake> {
  driver ??= import("snowflake-sdk").then(({ default: sdk }) => {
    // The driver logs to the console by default; its lines could carry connection details.
    sdk.configure({ logLevel: "OFF" });
    return sdk;
  });
  return driver;
}

export class SnowflakeDestination implements Destination {
  readonly type = "SNOWFLAKE";
  private connection: snowflake.Connection | undefined;
  private ensured = false;
  private readonly target: string;

  constructor(
    private readonly attrs: SnowflakeAttributes,
    private readonly ctx: DestinationContext,
    private readonly egress: EgressPolicy,
  ) {
    for (const [k, v] of [
      ["database", attrs.database],
      ["schema", attrs.schema],
      ["tableName", attrs.tableName],
      ["warehouse", attrs.warehouse],
    ] as const) {
      if (!IDENT.test(v ?? "")) {
        throw new DestinationError(`${k} "${v}" must be a plain Snowflake identifier`, { retryable: false });
      }
    }
    if (!/^[A-Za-z0-9._-]+$/.test(attrs.account ?? "")) {
      throw new DestinationError(`account "${attrs.account}" is not a valid Snowflake account identifier`, {
        retryable: false,
      });
    }
    this.target = `"${attrs.database}"."${attrs.schema}"."${attrs.tableName}"`;
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    try {
      await this.execute("SELECT CURRENT_ROLE() AS ROLE");
      return {
        ok: true,
        message: `connected to Snowflake account ${this.attrs.account}`,
        durationMs: performance.now() - t,
      };
    } catch (e) {
      return { ok: false, message: errorMessage(e), durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    const t = performance.now();
    if (!this.ensured) {
      await this.execute(
        `CREATE TABLE IF NOT EXISTS ${this.target} (stream_id STRING, network STRING, dataset STRING, block_start NUMBER, block_end NUMBER, is_reorg BOOLEAN, data VARIANT, received_at TIMESTAMP_TZ DEFAULT CURRENT_TIMESTAMP())`,
      );
      this.ensured = true;
    }
    await this.execute(
      `INSERT INTO ${this.target} (stream_id, network, dataset, block_start, block_end, is_reorg, data) SELECT ?, ?, ?, ?, ?, ?, PARSE_JSON(?)`,
      [
        this.ctx.streamId,
        this.ctx.network,
        this.ctx.dataset,
        batch.startBlock,
        batch.endBlock,
        batch.isReorg ?? false,
        batch.payloadJson,
      ],
    );
    return { bytes: Buffer.byteLength(batch.payloadJson), durationMs: performance.now() - t, detail: this.target };
  }

  async close(): Promise<void> {
    const c = this.connection;
    this.connection = undefined;
    if (c?.isUp()) await new Promise<void>((resolve) => c.destroy(() => resolve()));
  }

  private async connect(): Promise<snowflake.Connection> {
    if (this.connection?.isUp()) return this.connection;
    const a = this.attrs;
    // The driver takes no socket or agent, so its host is resolved and checked just before it connects.
    const host = a.host ?? `${a.account}.snowflakecomputing.com`;
    const port = a.port ?? ((a.protocol ?? "https") === "https" ? 443 : 80);
    try {
      await this.egress.resolve(host, port);
    } catch (e) {
      throw new DestinationError(`Snowflake: cannot connect to account ${a.account}: ${errorMessage(e)}`, {
        retryable: !isEgressRefusal(e),
      });
    }
    const conn = (await snowflakeDriver()).createConnection({
      account: a.account,
      username: a.username,
      password: a.password,
      warehouse: a.warehouse,
      database: a.database,
      schema: a.schema,
      ...(a.host
        ? { host: a.host, accessUrl: `${a.protocol ?? "https"}://${a.host}${a.port ? `:${a.port}` : ""}` }
        : {}),
      timeout: CONNECT_DEADLINE_MS,
      sfRetryMaxLoginRetries: 1,
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        new Promise<void>((resolve, reject) => conn.connect((err) => (err ? reject(err) : resolve()))),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer from Snowflake within ${CONNECT_DEADLINE_MS / 1000} s`)),
            CONNECT_DEADLINE_MS,
          );
        }),
      ]);
    } catch (e) {
      conn.destroy(() => {});
      throw new DestinationError(`Snowflake: cannot connect to account ${a.account}: ${errorMessage(e)}`, {
        retryable: true,
      });
    } finally {
      clearTimeout(timer);
    }
    this.connection = conn;
    return conn;
  }

  private async execute(sqlText: string, binds: (string | number | boolean)[] = []): Promise<void> {
    const conn = await this.connect();
    await new Promise<void>((resolve, reject) =>
      conn.execute({
        sqlText,
        binds,
        complete: (err) =>
          err ? reject(new DestinationError(`Snowflake: ${errorMessage(err)}`, { retryable: true })) : resolve(),
      }),
    );
  }
}
