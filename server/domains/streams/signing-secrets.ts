import { and, eq, like, sql } from "drizzle-orm";
import { openSecrets } from "../../dataplane/engine/config.ts";
import type { Executor } from "../../platform/db/index.ts";
import type { SecretBox } from "../../platform/secrets.ts";
import { streams } from "./tables.ts";

/**
 * The security tokens of the account's streams and webhooks whose WEBHOOK destination URL ends with
 * `path` (the request inspector checks a request's signature against them). `path` holds no LIKE
 * wildcard: the inspector's paths are letters, digits and slashes.
 */
export function destinationSigningSecrets(box: SecretBox) {
  return async (db: Executor, accountId: string, path: string): Promise<string[]> => {
    const rows = await db
      .select({ sealed: streams.destinationSecrets })
      .from(streams)
      .where(
        and(
          eq(streams.accountId, accountId),
          eq(streams.destination, "WEBHOOK"),
          like(sql`${streams.destinationAttributes}->>'url'`, `%${path}`),
        ),
      );
    return rows.flatMap((r) => {
      const token = openSecrets(box, r.sealed).securityToken;
      return token ? [token] : [];
    });
  };
}
