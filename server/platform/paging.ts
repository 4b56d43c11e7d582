import { badInput } from "./errors.ts";
import { isUuid } from "./ids.ts";

/**
 * The one way a list pages. A cursor is opaque to the client: the base64url JSON of the sort key's
 * parts and the id that breaks ties. A list reads one row more than the page to know whether another
 * page follows. A cursor that does not decode to the list's key, or a page size out of range, is
 * BAD_USER_INPUT on its argument; both are checked before the list's owner is looked up, since either is
 * the caller's mistake whoever owns it.
 */

/** What one part of a cursor holds, and what it decodes to. */
interface CursorParts {
  string: string;
  uuid: string;
  integer: number;
  timestamp: Date;
}
export type CursorPart = keyof CursorParts;
export type CursorKey<S extends readonly CursorPart[]> = { [I in keyof S]: CursorParts[S[I]] };

const encodePart = (value: string | number | Date) => (value instanceof Date ? value.toISOString() : value);

export function encodeCursor(key: readonly (string | number | Date)[]): string {
  return Buffer.from(JSON.stringify(key.map(encodePart))).toString("base64url");
}

function decodePart(part: CursorPart, value: unknown): string | number | Date | undefined {
  switch (part) {
    case "string":
      // PostgreSQL text cannot hold NUL: a key with one was never listed.
      return typeof value === "string" && !value.includes("\u0000") ? value : undefined;
    case "uuid":
      return typeof value === "string" && isUuid(value) ? value : undefined;
    case "integer":
      return Number.isSafeInteger(value) ? (value as number) : undefined;
    case "timestamp": {
      if (typeof value !== "string") return undefined;
      const date = new Date(value);
      // Years 1-9999 only: others are written with a sign or six digits, which PostgreSQL refuses.
      const year = date.getUTCFullYear();
      return Number.isNaN(date.getTime()) || year < 1 || year > 9999 ? undefined : date;
    }
  }
}

/** The key a cursor holds, checked against the list's key shape; `argument` names the bad argument. */
export function decodeCursor<const S extends readonly CursorPart[]>(
  text: string,
  shape: S,
  argument = "after",
): CursorKey<S> {
  const refused = badInput([{ pointer: `/${argument}`, message: "This cursor is not valid." }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw refused;
  }
  if (!Array.isArray(parsed) || parsed.length !== shape.length) throw refused;
  const key = shape.map((part, i) => decodePart(part, parsed[i]));
  if (key.some((value) => value === undefined)) throw refused;
  // Each part was decoded by its kind in the shape, which is what CursorKey<S> says.
  return key as unknown as CursorKey<S>;
}

/** The cursor argument decoded, or null on the first page (no cursor, or an empty one). */
export function cursorArgument<const S extends readonly CursorPart[]>(
  text: string | null | undefined,
  shape: S,
  argument = "after",
): CursorKey<S> | null {
  return text ? decodeCursor(text, shape, argument) : null;
}

export const DEFAULT_PAGE_SIZE = 20;
/** The largest page a list serves: the console's pager offers up to this (renderer/views/ListPager.tsx). */
export const MAX_PAGE_SIZE = 500;

export interface PageSizeRule {
  /** The argument the size is asked in, named when it is refused: `first` unless the list calls it otherwise. */
  argument?: string;
  fallback?: number;
  max?: number;
}

/**
 * How many rows a page holds: the asked size, or the fallback when none was asked. A size that is not a
 * whole number from 1 to max is refused (BAD_USER_INPUT on its argument), above the max as below 1:
 * bringing it within range hid the caller's mistake (-5 served as 1 row, 10 000 as 500, and a list that is
 * one page, such as topEndpoints, then looks complete); GitHub's GraphQL API likewise takes only 1 to 100.
 * The console never asks for more (tests/contract/page-sizes.test.ts).
 */
export function pageSize(requested: number | null | undefined, rule: PageSizeRule = {}): number {
  const max = rule.max ?? MAX_PAGE_SIZE;
  const size = requested ?? rule.fallback ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > max)
    throw badInput([{ pointer: `/${rule.argument ?? "first"}`, message: `Give a page size from 1 to ${max}.` }]);
  return size;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Connection<T> {
  rows: T[];
  edges: Edge<T>[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * A page from the rows a list read (at most `size + 1`, in order): the first `size`, each with its
 * cursor, and whether more follow.
 */
export function connection<T>(
  fetched: readonly T[],
  size: number,
  keyOf: (row: T) => readonly (string | number | Date)[],
): Connection<T> {
  return connectionWithCursors(fetched, size, (row) => encodeCursor(keyOf(row)));
}

/** The same, with each row's cursor already encoded (a list that keeps its rows keeps their cursors). */
export function connectionWithCursors<T>(
  fetched: readonly T[],
  size: number,
  cursorOf: (row: T) => string,
): Connection<T> {
  const rows = fetched.slice(0, size);
  const edges = rows.map((node) => ({ cursor: cursorOf(node), node }));
  return {
    rows,
    edges,
    pageInfo: { hasNextPage: fetched.length > size, endCursor: edges.at(-1)?.cursor ?? null },
  };
}
