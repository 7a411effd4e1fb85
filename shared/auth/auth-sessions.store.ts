/**
 * Query module of `auth_sessions` (signed-in browser sessions) and `auth_logins` (sign-ins in
 * progress). The cookie carries a random token; rows are keyed by its SHA-256.
 */
import { createHash, randomBytes } from 'node:crypto';
import { db } from '../db/index.js';
import { config } from '../config.js';
import type { Role } from './roles.js';
import type { HeldTokens } from './oidc.js';

const SESSIONS = 'auth_sessions';
const LOGINS = 'auth_logins';

export interface AuthSession {
  subject: string;
  name: string;
  email: string | null;
  roles: Role[];
  csrf_token: string;
  id_token: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

const COLUMNS = ['subject', 'name', 'email', 'roles', 'csrf_token', 'id_token', 'created_at', 'last_seen_at', 'expires_at'];
/** last_seen_at is refreshed at most this often, so a busy page does not write on every request. */
const touchEverySeconds = 60;

const hash = (token: string) => createHash('sha256').update(token).digest('base64url');
export const randomToken = () => randomBytes(32).toString('base64url');

export interface NewAuthSession {
  subject: string;
  name: string;
  email: string | null;
  roles: Role[];
  id_token: string | null;
  access_token: string | null;
  refresh_token: string | null;
}

/** Creates a session; returns the cookie token (never stored) with the row. */
export async function createAuthSession(input: NewAuthSession): Promise<{ token: string; session: AuthSession }> {
  const token = randomToken();
  const [session] = (await db()(SESSIONS)
    .insert({
      token_hash: hash(token),
      ...input,
      csrf_token: randomToken(),
      expires_at: db().raw('now() + ?::interval', [config().auth.session.max]),
    })
    .returning(COLUMNS)) as AuthSession[];
  return { token, session: session! };
}

/**
 * The live session of a cookie token, or undefined when unknown, past its absolute end or idle too
 * long (such a row is deleted on the way). Refreshes last_seen_at. `rolesDue`: its roles were last
 * read from the provider longer than AUTH_ROLES_REFRESH ago.
 */
export async function findAuthSession(token: string): Promise<{ session: AuthSession; rolesDue: boolean } | undefined> {
  const k = db();
  const { idle, rolesRefresh } = config().auth.session;
  const row = (await k(SESSIONS)
    .where({ token_hash: hash(token) })
    .first([
      ...COLUMNS,
      k.raw('(expires_at > now() and last_seen_at + ?::interval > now()) as live', [idle]),
      k.raw(`last_seen_at < now() - interval '${touchEverySeconds} seconds' as stale_touch`),
      k.raw('roles_checked_at <= now() - ?::interval as roles_due', [rolesRefresh]),
    ])) as (AuthSession & { live: boolean; stale_touch: boolean; roles_due: boolean }) | undefined;
  if (!row) return undefined;
  if (!row.live) {
    await k(SESSIONS).where({ token_hash: hash(token) }).delete();
    return undefined;
  }
  if (row.stale_touch) await k(SESSIONS).where({ token_hash: hash(token) }).update({ last_seen_at: k.fn.now() });
  const { live: _live, stale_touch: _touch, roles_due: rolesDue, ...session } = row;
  return { session, rolesDue };
}

/**
 * Takes the due roles check of a session: one request of many wins (the row's check time moves on
 * at once) and gets the tokens to re-read the person with; the others go on with the roles they have.
 */
export async function claimRolesCheck(token: string): Promise<HeldTokens | undefined> {
  const k = db();
  const [row] = (await k(SESSIONS)
    .where({ token_hash: hash(token) })
    .where('roles_checked_at', '<=', k.raw('now() - ?::interval', [config().auth.session.rolesRefresh]))
    .update({ roles_checked_at: k.fn.now() })
    .returning(['access_token', 'refresh_token', 'id_token'])) as Array<{ access_token: string | null; refresh_token: string | null; id_token: string | null }>;
  if (!row) return undefined;
  return { access_token: row.access_token ?? '', refresh_token: row.refresh_token, id_token: row.id_token };
}

/** Stores what the provider said of a session's person on a roles check (roles, name, email, new tokens); the session as it is now. */
export async function updateCheckedSession(token: string, person: Pick<AuthSession, 'name' | 'email' | 'roles'> & HeldTokens): Promise<AuthSession | undefined> {
  const [session] = (await db()(SESSIONS).where({ token_hash: hash(token) }).update(person).returning(COLUMNS)) as AuthSession[];
  return session;
}

/** Ends a session; true when there was one. */
export async function deleteAuthSession(token: string): Promise<boolean> {
  return (await db()(SESSIONS).where({ token_hash: hash(token) }).delete()) > 0;
}

/** Deletes sessions past either lifetime and sign-ins abandoned for over 10 minutes; returns how many sessions went. */
export async function sweepAuthSessions(): Promise<number> {
  const k = db();
  await expireAbandonedLogins();
  return k(SESSIONS)
    .where('expires_at', '<=', k.fn.now())
    .orWhere('last_seen_at', '<=', k.raw('now() - ?::interval', [config().auth.session.idle]))
    .delete();
}

export interface PendingLogin {
  state: string;
  nonce: string;
  code_verifier: string;
  return_to: string;
}

/** Deletes sign-ins started over 10 minutes ago and never completed (they can no longer complete). */
export async function expireAbandonedLogins(): Promise<void> {
  const k = db();
  await k(LOGINS).where('created_at', '<', k.raw("now() - interval '10 minutes'")).delete();
}

/** Records a sign-in in progress; each start also clears abandoned ones, so anonymous starts leave no lasting rows. */
export async function savePendingLogin(login: PendingLogin): Promise<void> {
  await expireAbandonedLogins();
  await db()(LOGINS).insert(login);
}

/** Takes (and deletes) the sign-in of a state, if it is under 10 minutes old: a state works once. */
export async function takePendingLogin(state: string): Promise<PendingLogin | undefined> {
  const [row] = (await db()(LOGINS)
    .where({ state })
    .delete()
    .returning(['state', 'nonce', 'code_verifier', 'return_to', db().raw("created_at > now() - interval '10 minutes' as fresh")])) as Array<PendingLogin & { fresh: boolean }>;
  if (!row?.fresh) return undefined;
  const { fresh: _fresh, ...login } = row;
  return login;
}
