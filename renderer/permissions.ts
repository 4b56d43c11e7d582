// The one permission function. Roles are ordered OWNER > ADMIN > VIEWER; a VIEWER changes nothing,
// so anything that runs a mutation needs at least ADMIN whatever the manifest says.
import type { Role } from "./types.ts";

const RANK: Record<Role, number> = { VIEWER: 1, ADMIN: 2, OWNER: 3 };

/** True when `role` (the viewer's) is at least `required`. Unknown or missing roles can do nothing. */
export function can(role: string | null | undefined, required: Role = "VIEWER"): boolean {
  const have = RANK[role as Role];
  return have !== undefined && have >= RANK[required];
}

/** The role an action or form needs: a mutation needs at least ADMIN. */
export function requiredRole(declared: Role | undefined, mutates: boolean): Role {
  if (!mutates) return declared ?? "VIEWER";
  return declared && RANK[declared] > RANK.ADMIN ? declared : "ADMIN";
}
