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

/** The roles the changes a screen offers need: each form and action that runs a mutation, anywhere in its views. */
export function changeRoles(views: unknown): Role[] {
  const roles: Role[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) walk(item);
    else if (node && typeof node === "object") {
      const record = node as Record<string, unknown>;
      if (typeof record.mutation === "string") roles.push(requiredRole(record.role as Role | undefined, true));
      for (const value of Object.values(record)) walk(value);
    }
  };
  walk(views);
  return roles;
}

/**
 * What a member may not change on a screen, said once for the page: null when they may make every
 * change it offers (or it offers none); otherwise whether they may change nothing there, and the
 * lowest role that may.
 */
export function readOnlyFor(
  role: string | null | undefined,
  views: unknown,
): { nothing: boolean; needed: Role } | null {
  const roles = changeRoles(views);
  const refused = roles.filter((needed) => !can(role, needed));
  if (refused.length === 0) return null;
  const needed = refused.reduce((low, next) => (RANK[next] < RANK[low] ? next : low));
  return { nothing: refused.length === roles.length, needed };
}
