// Carries chosen domain events between service processes through PostgreSQL NOTIFY/LISTEN, so a
// change made through one process's API reaches the data plane of every other process at once
// (e.g. a new rate limiter applies in every proxy without waiting for the periodic reload).
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { DomainEventMap, DomainEvents } from "./events.ts";

export const EVENTS_CHANNEL = "nodeplane_domain_events";
const RECONNECT_MS = 1000;

interface Envelope {
  origin: string;
  name: keyof DomainEventMap;
  payload: unknown;
}

export interface EventsRelay {
  close(): Promise<void>;
}

export function relayEvents(
  pool: pg.Pool,
  events: DomainEvents,
  names: (keyof DomainEventMap)[],
  log: (message: string, error?: unknown) => void,
): EventsRelay {
  const origin = randomBytes(8).toString("hex");
  // Payloads that arrived from another process: re-emitted here, never published again.
  const received = new WeakSet<object>();
  let listener: pg.PoolClient | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const unsubscribes = names.map((name) =>
    events.on(name, (payload) => {
      if (received.has(payload)) return;
      const envelope: Envelope = { origin, name, payload };
      pool
        .query("select pg_notify($1, $2)", [EVENTS_CHANNEL, JSON.stringify(envelope)])
        .catch((error) => log(`could not publish ${name} to other processes`, error));
    }),
  );

  const scheduleListen = () => {
    if (closed) return;
    retry = setTimeout(() => void listen(), RECONNECT_MS);
    retry.unref();
  };

  async function listen(): Promise<void> {
    if (closed) return;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      log("domain events relay could not connect; retrying", error);
      scheduleListen();
      return;
    }
    listener = client;
    client.on("notification", (message) => {
      let envelope: Envelope;
      try {
        envelope = JSON.parse(message.payload ?? "") as Envelope;
      } catch {
        return;
      }
      if (envelope.origin === origin || !names.includes(envelope.name) || typeof envelope.payload !== "object") return;
      const payload = envelope.payload as DomainEventMap[typeof envelope.name];
      received.add(payload);
      events.emit(envelope.name, payload);
    });
    client.on("error", (error) => {
      if (listener !== client) return;
      listener = null;
      client.release(error);
      if (closed) return;
      log("domain events relay lost its LISTEN connection; reconnecting", error);
      scheduleListen();
    });
    try {
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      if (listener === client) {
        listener = null;
        client.release(error as Error);
      }
      log("domain events relay could not LISTEN; retrying", error);
      scheduleListen();
    }
  }

  void listen();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      for (const unsubscribe of unsubscribes) unsubscribe();
      const client = listener;
      listener = null;
      if (client) {
        await client.query(`UNLISTEN ${EVENTS_CHANNEL}`).catch(() => undefined);
        client.release();
      }
    },
  };
}
