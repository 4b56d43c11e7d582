// The one permission function. Roles are ordered OWNER > ADMIN > VIEWER; a VIEWER changes nothing of
// the account, so anything that runs a mutation needs at least ADMIN unless its manifest says otherwise
// (the service checks every mutation's role whatever the console shows).
import type { Role } from "./types.ts";

const RANK: Record<Role, number> = { VIEWER: 1, ADMIN: 2, OWNER: 3 };

/** True when `role` (the viewer's) is at least `required`. Unknown or missing roles can do nothing. */
export function can(role: string | null | undefined, required: Role = "VIEWER"): boolean {
  const have = RANK[role as Role];
  return have !== undefined && have >= RANK[required];
}

const LABELS: Record<Role, string> = { VIEWER: "Viewer", ADMIN: "Admin", OWNER: "Owner" };

/** A role as people read it ("Admin"); an unknown one as it is. */
export function roleLabel(role: string): string {
  return LABELS[role as Role] ?? role;
}

/**
 * The role an action or form needs: a mutation needs at least ADMIN, unless the manifest declares
 * it open to every member (`"role": "VIEWER"`: a member's own name and password).
 */
export function requiredRole(declared: Role | undefined, mutates: boolean): Role {
  if (!mutates || declared) return declared ?? "VIEWER";
  return "ADMIN";
}
