/** People for tests: a user with given roles, as a sign-in would have copied them; a portal user without a phone number; a user with a linked Slack account. */
import { randomBytes } from 'node:crypto';
import { db } from '../../shared/db/index.js';
import { createUser, type User } from '../../shared/users/users.store.js';
import { freshPhone } from './chatapp.js';
import { linkSlackUser } from './channels.js';

/** A new user holding `roles` (an assistant serving them may use those roles' tools). */
export async function userWithRoles(roles: string[], phone = freshPhone()): Promise<User & { phone_number: string }> {
  const user = await createUser({ phone_number: phone });
  await db()('users').where({ user_id: user.user_id }).update({ roles });
  return user;
}

/** A portal user without a phone number, as after a first sign-in; returns the user id. */
export async function portalUserWithoutPhone(): Promise<string> {
  const [row] = (await db()('users').insert({ display_name: 'Portal Person' }).returning(['user_id'])) as Array<{ user_id: string }>;
  return row!.user_id;
}

/** A new user with a Slack account of the test workspace linked to it (a confirmed link). */
export async function linkedSlackUser(): Promise<{ user: User; slackId: string }> {
  const slackId = `U${randomBytes(4).toString('hex').toUpperCase()}`;
  const user = await createUser({ phone_number: freshPhone(), display_name: slackId });
  await linkSlackUser(slackId, user.user_id);
  return { user, slackId };
}
