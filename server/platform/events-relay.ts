// Carries chosen domain events between service processes through PostgreSQL NOTIFY/LISTEN, so a
// change made through one process's API reaches the data plane and caches of every other process at
// once (an endpoint's new token, a new rate limiter, a signed-out session). After its LISTEN connection is re-established it emits
// "relay.resynced" locally, since what was sent meanwhile is lost.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { listenWithReconnect } from "./db/listen.ts";
import type { DomainEventMap, DomainEvents } from "./events.ts";

export const EVENTS_CHANNEL = "nodeplane_domain_events";

interface Envelope {
  origin: string;
  name: RelayedEvent;
  payload: unknown;
}

export interface EventsRelay {
  close(): Promise<void>;
}

type RelayedEvent = Exclude<keyof DomainEventMap, "relay.resynced">;

export async function relayEvents(
  pool: pg.Pool,
  events: DomainEvents,
  names: RelayedEvent[],
  log: (message: string, error?: unknown) => void,
): Promise<EventsRelay> {
  const origin = randomBytes(8).toString("hex");
  // Payloads that arrived from another process: re-emitted here, never published again.
  const received = new WeakSet<object>();

  const unsubscribes = names.map((name) =>
    events.on(name, async (payload) => {
      if (received.has(payload)) return;
      const envelope: Envelope = { origin, name, payload };
      await pool
        .query("select pg_notify($1, $2)", [EVENTS_CHANNEL, JSON.stringify(envelope)])
        .catch((error) => log(`could not publish ${name} to other processes`, error));
    }),
  );

  const listener = await listenWithReconnect(pool, EVENTS_CHANNEL, {
    name: "domain events relay",
    log,
    onNotification: (text) => {
      let envelope: Envelope;
      try {
        envelope = JSON.parse(text) as Envelope;
      } catch {
        return;
      }
      if (envelope.origin === origin || !names.includes(envelope.name) || typeof envelope.payload !== "object") return;
      const payload = envelope.payload as DomainEventMap[typeof envelope.name];
      received.add(payload);
      events.emit(envelope.name, payload);
    },
    onReconnect: () => events.emit("relay.resynced", {}),
  });

  return {
    async close() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      await listener.close();
    },
  };
}
