/** The platform's roles and how a provider's role or group claim maps onto them. */

/** `sre` opens the console, `staff` works support cases, `sales` works the CRM; every signed-in person is a portal `user`. */
export type Role = 'sre' | 'staff' | 'sales' | 'user';
export const elevatedRoles = ['sre', 'staff', 'sales'] as const;
export type ElevatedRole = (typeof elevatedRoles)[number];

/**
 * Roles of a person from the claims of the ID token and userinfo. The claim may be an array, a
 * space- or comma-separated string, or absent. A value `sre`/`staff`/`sales` is that role; `roleMap` renames
 * provider groups (ops-team → sre). Everyone gets `user`.
 */
export function rolesFromClaims(claims: Record<string, unknown>, claim: string, roleMap: Record<string, ElevatedRole>): Role[] {
  const raw = claims[claim];
  const values = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(/[\s,]+/).filter(Boolean) : [];
  const roles = new Set<Role>();
  for (const value of values) {
    const mapped = roleMap[value] ?? (elevatedRoles as readonly string[]).find((r) => r === value);
    if (mapped) roles.add(mapped as Role);
  }
  roles.add('user');
  return [...elevatedRoles, 'user'].filter((r) => roles.has(r as Role)) as Role[];
}
