import type { UpstreamMap } from "../dataplane/chain/nodes.ts";
import type { SessionCache } from "../domains/account/sessions.ts";
import type { EndpointListCache } from "../domains/endpoints/list-cache.ts";
import type { EndpointCreatedHook } from "../domains/endpoints/service.ts";
import type { PartStorage } from "../domains/kv/part-storage.ts";
import type { StreamsRuntime } from "../domains/streams/runtime.ts";
import type { DomainEvents } from "../platform/events.ts";
import type { Mailer } from "../platform/mail.ts";
import type { RegistryHolder } from "../registry/watch.ts";
import type { ResponseCache } from "./response-cache.ts";

/** Long-lived parts of the service that resolvers reach through the context; app.ts builds them. */
export interface Services {
  events: DomainEvents;
  registry: RegistryHolder;
  endpointCreatedHooks: EndpointCreatedHook[];
  /** The chain nodes this installation has, by network: which networks it serves. */
  upstreams: UpstreamMap;
  /** E-mail to users (verification links) and notifications: the outbox, and SMTP when configured. */
  mailer: Mailer;
  /** The chain nodes, the stream engine's wake-up, the mailer and the functions runtime. */
  streams: StreamsRuntime;
  /** Who each session cookie belongs to, kept in the process. */
  sessions: SessionCache;
  /** Each account's endpoints as the list pages them, kept in the process. */
  endpointLists: EndpointListCache;
  /** Answers to repeated reads built only from snapshots like the endpoint lists. */
  answers: ResponseCache;
  /** Where the parts of key-value uploads are kept (the data directory, or S3). */
  kvParts: PartStorage;
}
