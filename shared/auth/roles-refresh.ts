/**
 * Browser sessions whose roles follow the identity provider: at the first request after
 * AUTH_ROLES_REFRESH the person is re-read there (refresh token, else userinfo), and the session and
 * the user's copies take what the provider says now. A person it no longer vouches for is signed out.
 */
import { logger } from '../logger.js';
import { updateProviderCopies } from '../users/users.store.js';
import { claimRolesCheck, deleteAuthSession, findAuthSession, updateCheckedSession, type AuthSession } from './auth-sessions.store.js';
import { rereadPerson, SignInRevokedError } from './oidc.js';

/** The live session of a cookie token with roles at most AUTH_ROLES_REFRESH old, or undefined (none, ended, or signed out now). */
export async function liveAuthSession(token: string): Promise<AuthSession | undefined> {
  const found = await findAuthSession(token);
  if (!found?.rolesDue) return found?.session;
  const held = await claimRolesCheck(token);
  if (!held) return found.session;
  const { subject } = found.session;
  try {
    const person = await rereadPerson(subject, held);
    const copies = { name: person.name, email: person.email, roles: person.roles };
    // The assistant acts with the user's copied roles: they follow too.
    await updateProviderCopies(subject, copies);
    return await updateCheckedSession(token, { ...copies, access_token: person.accessToken, refresh_token: person.refreshToken, id_token: person.idToken });
  } catch (err) {
    if (err instanceof SignInRevokedError) {
      await deleteAuthSession(token);
      logger().info({ subject, reason: err.message }, 'signed out: the identity provider no longer vouches for this person');
      return undefined;
    }
    // An unreachable provider must not sign everyone out: the roles stand until the next check.
    logger().warn({ subject, err: (err as Error).message }, 'roles not re-read from the identity provider; tried again after AUTH_ROLES_REFRESH');
    return found.session;
  }
}
