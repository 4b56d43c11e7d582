import {
  type DocumentNode,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  parse,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from "graphql";
import { LRUCache } from "lru-cache";
import type { AnswerEncoding, CompressedCopies } from "../platform/answer-compression.ts";
import type { Context, Principal } from "./context.ts";

/**
 * Answers to repeated reads, kept whole. A list screen asks the same query every time it is shown,
 * polled or refocused; when everything in the answer comes from an in-process read model (the endpoint
 * lists, say), the answer is the same until that model changes, and sending the stored answer skips
 * parsing the variables, executing, serialising and collecting the garbage of all three. It is kept as
 * its UTF-8 bytes: a text would be measured (content-length, the compression threshold), joined to the
 * headers and encoded again on every send, which for a 14 KB list cost more than the rest of a hit.
 * Its compressed copies are kept with it, made on the first send in each encoding (brotli took ~0.5 ms
 * of the service's CPU per send of that list).
 *
 * An answer is kept only when it cannot differ from a fresh one:
 * - the operation is a query, and every field in it that has a resolver of its own is marked with
 *   {@link snapshotRead} (a field without one reads its parent's property, which the marked field made);
 * - each marked field that ran said which snapshot it answered from ({@link readFrom}); one that had to
 *   read the database instead says so, and nothing is kept;
 * - the answer has no errors.
 * It is served again only to the same member, in the same account and role, for the same host, query
 * text, operation name and variables, while every snapshot it came from is still current (a change
 * drops the snapshot at once in this process, through the events relay in the others).
 */

/** What resolvers of one request tell the cache about where their answers came from. */
export interface ReadRecord {
  /** One check per snapshot read: whether it is still the current one. */
  snapshots: (() => boolean)[];
  /** A resolver read something that is not a snapshot: the answer is not kept. */
  uncacheable: boolean;
  /** Set by {@link ResponseCache.lookup} when the answer, once sent, may be kept: where it goes. */
  keepAs: KeepTicket | null;
  /** Set by {@link ResponseCache.lookup} when it found the answer: the one sent, with its compressed copies. */
  served: KeptAnswer | null;
}

export const newReadRecord = (): ReadRecord => ({ snapshots: [], uncacheable: false, keepAs: null, served: null });

const snapshotReaders = new WeakSet<object>();

/** Marks a resolver whose answer depends only on its arguments, the caller and the snapshots it names. */
export function snapshotRead<P, A, T>(
  resolver: (parent: P, args: A, ctx: Context, info?: GraphQLResolveInfo) => T,
): (parent: P, args: A, ctx: Context, info?: GraphQLResolveInfo) => T {
  snapshotReaders.add(resolver);
  return resolver;
}

/** Records the snapshot a marked resolver answered from, or (null) that it read the database instead. */
export function readFrom(record: ReadRecord, isCurrent: (() => boolean) | null): void {
  if (isCurrent) record.snapshots.push(isCurrent);
  else record.uncacheable = true;
}

/** An answer kept, as sent again: its UTF-8 bytes and their compressed copies. */
export class KeptAnswer implements CompressedCopies {
  private readonly copies = new Map<AnswerEncoding, Buffer>();

  constructor(
    readonly body: Buffer,
    readonly snapshots: (() => boolean)[],
  ) {}

  /** What it counts against the cache's bound: the body, and room for a copy of up to half of it per encoding. */
  get size(): number {
    return this.body.byteLength * 2;
  }

  compressed(encoding: AnswerEncoding): Buffer | undefined {
    return this.copies.get(encoding);
  }

  /** A copy larger than half the body is not kept (JSON compresses to a fifth or less), so {@link size} holds. */
  keepCompressed(encoding: AnswerEncoding, copy: Buffer): void {
    if (copy.byteLength * 2 <= this.body.byteLength) this.copies.set(encoding, copy);
  }
}

interface KeepTicket {
  key: string;
  query: string;
  operationName: string | undefined;
}

/** What the cache needs of a request: its parsed body and the origin it was sent to. */
export interface CacheableRequest {
  body: unknown;
  protocol: string;
  host: string;
}

/** Answers kept: bounded by count and by their total size. */
const MAX_ANSWERS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** An answer larger than this is not kept (one such answer would push out many small ones). */
const MAX_ONE_ANSWER_BYTES = 1024 * 1024;
/** Operations whose cacheability was worked out, by their text. */
const MAX_OPERATIONS = 1_000;

const operationKey = (query: string, operationName: string | undefined) => `${operationName ?? ""}\n${query}`;

/** The variables as text for the key; null for variables too deep to write (the API refuses those). */
function variablesText(variables: unknown): string | null {
  try {
    return JSON.stringify(variables ?? null);
  } catch {
    return null;
  }
}

/** The document, or null for a text that does not parse (the API answered it with an error). */
function parsed(query: string, maxTokens: number): DocumentNode | null {
  try {
    return parse(query, { maxTokens });
  } catch {
    return null;
  }
}

type ResolverMap = Record<string, Record<string, unknown> | unknown>;

export class ResponseCache {
  private readonly answers = new LRUCache<string, KeptAnswer>({
    max: MAX_ANSWERS,
    maxSize: MAX_ANSWER_BYTES,
    sizeCalculation: (answer) => answer.size,
  });
  /** Whether an operation (query text and operation name) may be kept at all, worked out once. */
  private readonly operations = new LRUCache<string, boolean>({ max: MAX_OPERATIONS });
  /** Answers served from here, and answers kept. */
  readonly stats = { hits: 0, kept: 0 };

  constructor(
    private readonly resolvers: ResolverMap,
    private readonly schema: GraphQLSchema,
    /** The API's own limit on a query's tokens (graphql-armor's), so parsing here costs no more. */
    private readonly maxTokens: number,
  ) {}

  /**
   * The stored answer to this request (also in {@link ReadRecord.served}), or null. When there is none
   * but one could be kept, `record` says where ({@link ReadRecord.keepAs}), and {@link keep} stores the
   * answer once it is sent.
   */
  lookup(request: CacheableRequest, principal: Principal | null, record: ReadRecord): KeptAnswer | null {
    const body = request.body as { query?: unknown; operationName?: unknown; variables?: unknown } | null;
    if (!principal || !body || typeof body !== "object" || Array.isArray(body) || typeof body.query !== "string")
      return null;
    const operationName = typeof body.operationName === "string" ? body.operationName : undefined;
    // A mutation, or a query that reads more than snapshots, costs one lookup here once it is known.
    if (this.operations.get(operationKey(body.query, operationName)) === false) return null;
    const variables = variablesText(body.variables);
    if (variables === null) return null;
    const key = [
      principal.userId,
      principal.accountId,
      principal.role,
      request.protocol,
      request.host,
      operationName ?? "",
      variables,
      body.query,
    ].join("\n");
    const stored = this.answers.get(key);
    if (stored) {
      if (stored.snapshots.every((isCurrent) => isCurrent())) {
        this.stats.hits++;
        record.served = stored;
        return stored;
      }
      this.answers.delete(key);
    }
    record.keepAs = { key, query: body.query, operationName };
    return null;
  }

  /** Stores the answer just sent for `record`'s request, when it may be kept. */
  keep(record: ReadRecord, statusCode: number, payload: unknown): void {
    const pending = record.keepAs;
    if (!pending) return;
    record.keepAs = null;
    // Each char is one UTF-8 byte or more: a text over the bound in chars is over it in bytes, unencoded.
    if (statusCode !== 200 || typeof payload !== "string" || payload.length > MAX_ONE_ANSWER_BYTES) return;
    if (!this.cacheableOperation(pending.query, pending.operationName)) return;
    if (record.uncacheable || record.snapshots.length === 0) return;
    // Whether the answer has errors: a kept answer never does (they may be about a passing failure).
    if (payload.includes('"errors":')) return;
    const body = Buffer.from(payload);
    if (body.byteLength > MAX_ONE_ANSWER_BYTES) return;
    this.answers.set(pending.key, new KeptAnswer(body, record.snapshots));
    this.stats.kept++;
  }

  private cacheableOperation(query: string, operationName: string | undefined): boolean {
    const key = operationKey(query, operationName);
    let cacheable = this.operations.get(key);
    if (cacheable === undefined) {
      cacheable = this.onlySnapshotReads(parsed(query, this.maxTokens), operationName);
      this.operations.set(key, cacheable);
    }
    return cacheable;
  }

  /** Whether the operation is a query that reads a snapshot and whose every field with its own resolver does. */
  private onlySnapshotReads(document: DocumentNode | null, operationName: string | undefined): boolean {
    if (!document) return false;
    const operation = getOperationAST(document, operationName);
    if (operation?.operation !== "query") return false;
    const typeInfo = new TypeInfo(this.schema);
    const resolvers = this.resolvers;
    let cacheable = true;
    let snapshotFields = 0;
    // Fragments not used by the operation are checked too: that only ever keeps less.
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        [Kind.FIELD]: () => {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          if (!parent || !field) cacheable = false;
          else if (!field.name.startsWith("__")) {
            const resolver = (resolvers[parent.name] as Record<string, unknown> | undefined)?.[field.name];
            const own =
              typeof resolver === "function" ? resolver : (resolver as { resolve?: unknown } | undefined)?.resolve;
            if (typeof own === "function") {
              if (snapshotReaders.has(own)) snapshotFields++;
              else cacheable = false;
            }
          }
        },
      }),
    );
    // An operation that reads no snapshot (`{ __typename }`) is never kept: nothing would say when it is stale.
    return cacheable && snapshotFields > 0;
  }
}
