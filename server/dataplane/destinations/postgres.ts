import pg from "pg";
import type { EgressPolicy } from "../../platform/egress.ts";
import { POSTGRES_DEFAULT_PORT } from "./addresses.ts";
import { errorMessage, isEgressRefusal } from "./common.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type PostgresAttributes,
  type TestResult,
} from "./types.ts";

/**
 * Inserts one row per batch into the named table, creating it when absent:
 *   id bigserial, stream_id text, network text, dataset text, block_start bigint, block_end bigint,
 *   is_reorg boolean, data jsonb, received_at timestamptz default now()
 * Queries are parameterised; the table name is checked to be `table` or `schema.table` made of plain
 * identifiers and then quoted. sslmode REQUIRE encrypts without verifying the certificate (libpq's
 * meaning of "require"); DISABLE connects in clear.
 *
 * test(): connects, and checks with has_table_privilege / has_schema_privilege that it may insert into
 * the table (or create it in the schema); it writes nothing.
 */
const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export function parseTableName(name: string): { schema: string | null; table: string; quoted: string } {
  const parts = name.split(".");
  if (parts.length > 2 || !parts.every((p) => IDENT.test(p))) {
    throw new DestinationError(
      `table name "${name}" must be a plain identifier (letters, digits, _ and $, not starting with a digit), optionally schema-qualified`,
      { retryable: false },
    );
  }
  const quoted = parts.map((p) => `"${p}"`).join(".");
  return parts.length === 2 ? { schema: parts[0], table: parts[1], quoted } : { schema: null, table: parts[0], quoted };
}

export class PostgresDestination implements Destination {
  readonly type = "POSTGRES";
  private readonly pool: pg.Pool;
  private readonly table: ReturnType<typeof parseTableName>;
  private ensured = false;

  constructor(
    attrs: PostgresAttributes,
    private readonly ctx: DestinationContext,
    egress: EgressPolicy,
  ) {
    this.table = parseTableName(attrs.tableName);
    const sslmode = attrs.sslmode ?? "REQUIRE";
    if (sslmode !== "REQUIRE" && sslmode !== "DISABLE") {
      throw new DestinationError(`unknown sslmode ${String(sslmode)}`, { retryable: false });
    }
    this.pool = new pg.Pool({
      host: attrs.host,
      port: attrs.port ?? POSTGRES_DEFAULT_PORT,
      user: attrs.username,
      password: attrs.password,
      database: attrs.database,
      ssl: sslmode === "REQUIRE" ? { rejectUnauthorized: false } : false,
      max: 2,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      query_timeout: 30_000,
      // Each connection's socket checks the address it connects to (and refuses a local socket path).
      stream: () => egress.socket(),
    });
    // An idle client that loses its server must not crash the process; the next query reports it.
    this.pool.on("error", () => {});
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    try {
      const { quoted } = this.table;
      const r = await this.pool.query<{ exists: boolean; can_insert: boolean | null; can_create: boolean }>(
        `SELECT to_regclass($1) IS NOT NULL AS exists,
                CASE WHEN to_regclass($1) IS NULL THEN NULL ELSE has_table_privilege(to_regclass($1), 'INSERT') END AS can_insert,
                has_schema_privilege(COALESCE($2, current_schema()), 'CREATE') AS can_create`,
        [quoted, this.table.schema],
      );
      const row = r.rows[0];
      const ok = row.exists ? row.can_insert === true : row.can_create;
      const message = row.exists
        ? ok
          ? `connected; table ${quoted} exists and accepts inserts`
          : `connected, but the user may not insert into ${quoted}`
        : ok
          ? `connected; table ${quoted} does not exist yet and will be created on first delivery`
          : `connected, but ${quoted} does not exist and the user may not create tables in its schema`;
      return { ok, message, durationMs: performance.now() - t };
    } catch (e) {
      return { ok: false, message: `PostgreSQL: ${errorMessage(e)}`, durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    const t = performance.now();
    try {
      await this.ensureTable();
      const r = await this.pool.query<{ id: string }>(
        `INSERT INTO ${this.table.quoted} (stream_id, network, dataset, block_start, block_end, is_reorg, data)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING id`,
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
      return {
        bytes: Buffer.byteLength(batch.payloadJson),
        durationMs: performance.now() - t,
        detail: `${this.table.quoted} row ${r.rows[0].id}`,
      };
    } catch (e) {
      const code = (e as { code?: string }).code ?? "";
      // SQLSTATE classes 22 (data), 42 (syntax/permission) will not get better by retrying.
      const retryable = !/^(22|42)/.test(code) && !isEgressRefusal(e);
      throw new DestinationError(`PostgreSQL: ${errorMessage(e)}`, { retryable });
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async ensureTable(): Promise<void> {
    if (this.ensured) return;
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.table.quoted} (
      id bigserial PRIMARY KEY,
      stream_id text NOT NULL,
      network text NOT NULL,
      dataset text NOT NULL,
      block_start bigint NOT NULL,
      block_end bigint NOT NULL,
      is_reorg boolean NOT NULL DEFAULT false,
      data jsonb NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    )`);
    this.ensured = true;
  }
}
