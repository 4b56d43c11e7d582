import { and, desc, eq, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { isUuid } from "../../platform/ids.ts";
import { functionActivations, functions } from "./tables.ts";

export type FunctionRow = typeof functions.$inferSelect;
export type ActivationRow = typeof functionActivations.$inferSelect;
export type NewActivation = Omit<typeof functionActivations.$inferInsert, "accountId" | "id">;

export interface FunctionValues {
  name?: string;
  description?: string | null;
  code?: string;
  timeoutSec?: number;
}

export function listFunctions(db: Executor, accountId: string): Promise<FunctionRow[]> {
  return db.select().from(functions).where(eq(functions.accountId, accountId)).orderBy(desc(functions.createdAt));
}

export async function getFunction(db: Executor, accountId: string, id: string): Promise<FunctionRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(functions)
    .where(and(eq(functions.accountId, accountId), eq(functions.id, id)));
  return row;
}

export async function insertFunction(
  db: Executor,
  accountId: string,
  values: Required<Pick<FunctionValues, "name" | "code">> & FunctionValues,
): Promise<FunctionRow> {
  const [row] = await db
    .insert(functions)
    .values({ ...values, accountId })
    .returning();
  return row;
}

export async function updateFunction(
  db: Executor,
  accountId: string,
  id: string,
  values: FunctionValues,
): Promise<FunctionRow | undefined> {
  const [row] = await db
    .update(functions)
    .set({ ...values, updatedAt: new Date() })
    .where(and(eq(functions.accountId, accountId), eq(functions.id, id)))
    .returning();
  return row;
}

export async function deleteFunction(db: Executor, accountId: string, id: string): Promise<void> {
  await db.delete(functions).where(and(eq(functions.accountId, accountId), eq(functions.id, id)));
}

export async function insertActivation(db: Executor, accountId: string, values: NewActivation): Promise<ActivationRow> {
  const [row] = await db
    .insert(functionActivations)
    .values({ ...values, accountId })
    .returning();
  return row;
}

/** Keeps a function's newest `kept` activations. */
export async function pruneActivations(db: Executor, functionId: string, kept: number): Promise<void> {
  await db.execute(sql`
    delete from function_activations where function_id = ${functionId} and created_at < (
      select created_at from function_activations where function_id = ${functionId}
      order by created_at desc offset ${kept - 1} limit 1)`);
}

export function listActivations(
  db: Executor,
  accountId: string,
  functionId: string,
  limit: number,
): Promise<ActivationRow[]> {
  return db
    .select()
    .from(functionActivations)
    .where(and(eq(functionActivations.accountId, accountId), eq(functionActivations.functionId, functionId)))
    .orderBy(desc(functionActivations.createdAt))
    .limit(limit);
}
