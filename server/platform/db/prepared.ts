// Hot queries are built once and run many times: Drizzle builds their SQL text once per database handle
// (building it was about a third of a list request's CPU), and PostgreSQL parses and plans a named
// statement once per connection. Values go in as placeholders (`sql.placeholder("name")`).
import type { Executor } from "./index.ts";

/**
 * A query that `build` makes on a handle, named `name` (unique per SQL text: PostgreSQL refuses a name
 * reused for another text on one connection), made once per handle. A transaction is a handle of its
 * own, so within one the query is built once per transaction.
 */
export function preparedQuery<Q>(name: string, build: (db: Executor, name: string) => Q): (db: Executor) => Q {
  const byHandle = new WeakMap<Executor, Q>();
  return (db) => {
    let query = byHandle.get(db);
    if (!query) {
      query = build(db, name);
      byHandle.set(db, query);
    }
    return query;
  };
}

/**
 * Like {@link preparedQuery} for a query whose SQL has a few shapes (a filter present or not, a sort
 * order): one statement per shape, named by its key, made on first use.
 */
export function preparedShapes<K extends string, Q>(
  name: string,
  build: (db: Executor, name: string, shape: K) => Q,
): (db: Executor, shape: K) => Q {
  const byHandle = new WeakMap<Executor, Map<K, Q>>();
  return (db, shape) => {
    let shapes = byHandle.get(db);
    if (!shapes) {
      shapes = new Map();
      byHandle.set(db, shapes);
    }
    let query = shapes.get(shape);
    if (!query) {
      query = build(db, `${name}:${shape}`, shape);
      shapes.set(shape, query);
    }
    return query;
  };
}
