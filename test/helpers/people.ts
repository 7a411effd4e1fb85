/** People for tests of what the assistant may do: a user with given roles, as a sign-in would have copied them. */
import { db } from '../../shared/db/index.js';
import { createUser, type User } from '../../shared/users/users.store.js';
import { freshPhone } from './chatapp.js';

/** A new user holding `roles` (an assistant serving them may use those roles' tools). */
export async function userWithRoles(roles: string[], phone = freshPhone()): Promise<User & { phone_number: string }> {
  const user = await createUser({ phone_number: phone });
  await db()('users').where({ user_id: user.user_id }).update({ roles });
  return user;
}
