// One PostgreSQL LISTEN connection that comes back by itself: taken from the pool, re-established a
// second after it is lost or refused. After a re-establishment `onReconnect` runs, since notifications
// sent while it was down are gone.
import type pg from "pg";

const RETRY_MS = 1000;

export interface PgListener {
  close(): Promise<void>;
}

export async function listenWithReconnect(
  pool: pg.Pool,
  channel: string,
  handlers: {
    onNotification: (payload: string) => void;
    onReconnect?: () => Promise<void> | void;
    /** Names the listener in log messages ("endpoint directory"). */
    name: string;
    log?: (message: string, error?: unknown) => void;
  },
): Promise<PgListener> {
  let client: pg.PoolClient | null = null;
  let closed = false;

  const retry = () => {
    if (closed) return;
    setTimeout(
      () =>
        void listen()
          .then((ok) => (ok ? handlers.onReconnect?.() : undefined))
          .catch(() => undefined),
      RETRY_MS,
    ).unref();
  };

  /** True when listening; false when it failed (a retry is scheduled). */
  async function listen(): Promise<boolean> {
    if (closed) return false;
    let connection: pg.PoolClient | null = null;
    try {
      const taken = await pool.connect();
      connection = taken;
      client = taken;
      taken.on("notification", (message) => handlers.onNotification(message.payload ?? ""));
      taken.on("error", (error) => {
        // Closed or replaced already: that path released it.
        if (client !== taken) return;
        client = null;
        taken.release(error);
        if (closed) return;
        handlers.log?.(`${handlers.name} lost its LISTEN connection; reconnecting`, error);
        retry();
      });
      await taken.query(`LISTEN ${channel}`);
      return true;
    } catch (error) {
      if (connection && client === connection) {
        client = null;
        connection.release(error as Error);
      }
      handlers.log?.(`${handlers.name} could not LISTEN; retrying`, error);
      retry();
      return false;
    }
  }

  await listen();
  return {
    async close() {
      closed = true;
      const taken = client;
      client = null;
      if (taken) {
        await taken.query(`UNLISTEN ${channel}`).catch(() => undefined);
        taken.release();
      }
    },
  };
}
