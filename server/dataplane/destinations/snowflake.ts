import type snowflake from "snowflake-sdk";
import type { EgressPolicy, EgressProxy } from "../../platform/egress.ts";
import { snowflakeAddress } from "./addresses.ts";
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
 *
 * The driver takes no socket, agent or lookup, only proxy settings, so each connection is pointed at
 * an egress proxy of its own (EgressPolicy.openProxy): login, queries, result chunks from cloud storage,
 * telemetry and logout all connect through it, checked on the address connected to. The driver's OCSP and CRL
 * revocation checks fetch from responders directly whatever the proxy says, so they are off; the
 * certificate chain and host name are still verified, as for every other destination.
 */
const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,254}$/;
const CONNECT_DEADLINE_MS = 15_000;

let driver: Promise<typeof snowflake> | undefined;

/** The driver, loaded with the first Snowflake connection: importing it takes seconds every start would pay. */
function snowflakeDriver(): Promise<typeof snowflake> {
  if (!driver) {
    // When it loads, the driver probes cloud metadata addresses (169.254.169.254, metadata.google.internal)
    // and AWS STS with this service's credentials, outside any proxy, and reports what it found to the
    // host at login: a tenant's host would learn where this service runs. Its documented switch turns it off.
    process.env.SNOWFLAKE_DISABLE_PLATFORM_DETECTION = "true";
    driver = import("snowflake-sdk").then(({ default: sdk }) => {
      // The driver logs to the console by default; its lines could carry connection details.
      sdk.configure({ logLevel: "OFF", disableOCSPChecks: true });
      return sdk;
    });
  }
  return driver;
}

export class SnowflakeDestination implements Destination {
  readonly type = "SNOWFLAKE";
  private connection: snowflake.Connection | undefined;
  private proxy: EgressProxy | undefined;
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
    const proxy = this.proxy;
    this.connection = undefined;
    this.proxy = undefined;
    if (c?.isUp()) await new Promise<void>((resolve) => c.destroy(() => resolve()));
    await proxy?.close();
  }

  private async connect(): Promise<snowflake.Connection> {
    if (this.connection?.isUp()) return this.connection;
    await this.close();
    const a = this.attrs;
    const { protocol, host, port } = snowflakeAddress(a);
    const cannotConnect = (e: unknown) =>
      new DestinationError(`Snowflake: cannot connect to account ${a.account}: ${errorMessage(e)}`, {
        retryable: !isEgressRefusal(e),
      });
    try {
      // An IP address or "localhost" is checked here, before the driver loads; the proxy checks names
      // on the address it connects to.
      this.egress.checkHost(host, port);
    } catch (e) {
      throw cannotConnect(e);
    }
    const proxy = await this.egress.openProxy(protocol === "http" ? { plainTarget: { host, port } } : {});
    let conn: snowflake.Connection | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      conn = (await snowflakeDriver()).createConnection({
        account: a.account,
        username: a.username,
        password: a.password,
        warehouse: a.warehouse,
        database: a.database,
        schema: a.schema,
        ...(a.host ? { host: a.host, accessUrl: `${protocol}://${a.host}${a.port ? `:${a.port}` : ""}` } : {}),
        proxyHost: proxy.host,
        proxyPort: proxy.port,
        proxyUser: proxy.user,
        proxyPassword: proxy.password,
        proxyProtocol: "http",
        timeout: CONNECT_DEADLINE_MS,
        sfRetryMaxLoginRetries: 1,
      });
      const connecting = conn;
      await Promise.race([
        new Promise<void>((resolve, reject) => connecting.connect((err) => (err ? reject(err) : resolve()))),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer from Snowflake within ${CONNECT_DEADLINE_MS / 1000} s`)),
            CONNECT_DEADLINE_MS,
          );
        }),
      ]);
    } catch (e) {
      conn?.destroy(() => {});
      await proxy.close();
      // The driver sees the proxy's refusal only as an HTTP status; the proxy knows why.
      throw cannotConnect(proxy.takeFailure() ?? e);
    } finally {
      clearTimeout(timer);
    }
    this.connection = conn;
    this.proxy = proxy;
    return conn;
  }

  private async execute(sqlText: string, binds: (string | number | boolean)[] = []): Promise<void> {
    const conn = await this.connect();
    this.proxy?.takeFailure();
    await new Promise<void>((resolve, reject) =>
      conn.execute({
        sqlText,
        binds,
        complete: (err) => {
          if (!err) {
            resolve();
            return;
          }
          // A result chunk from cloud storage is fetched through the proxy too: its refusal is the reason.
          const failure = this.proxy?.takeFailure() ?? err;
          reject(new DestinationError(`Snowflake: ${errorMessage(failure)}`, { retryable: !isEgressRefusal(failure) }));
        },
      }),
    );
  }
}
