export const roles = ["VIEWER", "ADMIN", "OWNER"] as const;
export type Role = (typeof roles)[number];

const rank: Record<Role, number> = { VIEWER: 0, ADMIN: 1, OWNER: 2 };

// Own keys only: `in` would also accept the names Object.prototype gives every object ("toString").
export const isRole = (value: unknown): value is Role => typeof value === "string" && Object.hasOwn(rank, value);

/** OWNER > ADMIN > VIEWER: the one comparison every permission check uses. */
export const roleAtLeast = (role: Role, required: Role) => rank[role] >= rank[required];
