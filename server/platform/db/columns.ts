import { timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * The columns most tables share, written once. A timestamp keeps the precision its table was created
 * with: millisecond ones (3) are those a cursor or a JavaScript Date must find again exactly.
 */
export const idColumn = () => uuid("id").primaryKey().defaultRandom();

const timestampColumn = (name: string, precision?: 3) =>
  timestamp(name, precision ? { withTimezone: true, precision } : { withTimezone: true })
    .notNull()
    .defaultNow();

export const createdAtColumn = (precision?: 3) => timestampColumn("created_at", precision);

export const updatedAtColumn = (precision?: 3) => timestampColumn("updated_at", precision);
