/**
 * The people store: the `users` table (E.164 phone number unique), with the portal profile's columns
 * and the identity provider's copies. Sign-in matching (sign-in.ts) and erasure (erase.ts) use it.
 */
import type { Knex } from 'knex';
import { db, isUniqueViolation } from '../db/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { forgetWindowsOnPhoneChange } from '../channels/chatapp/window.store.js';
import { notificationPreferencesSchema, type NotificationPreferences, type Profile } from './users.schemas.js';

const TABLE = 'users';
const COLUMNS: string[] = ['user_id', 'display_name', 'phone_number', 'email', 'created_at', 'updated_at'];

export interface User {
  user_id: string;
  display_name: string | null;
  phone_number: string | null;
  email: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The user with this E.164 phone number, or undefined. */
export async function findUserByPhone(phone: string): Promise<User | undefined> {
  return (await db()(TABLE).select(COLUMNS).where({ phone_number: phone }).first()) as User | undefined;
}

/** The one user with this email address (any case), or undefined when none or several have it. */
export async function findUserByEmail(email: string): Promise<User | undefined> {
  const found = (await db()(TABLE).select(COLUMNS).whereRaw('lower(email) = lower(?)', [email]).limit(2)) as User[];
  return found.length === 1 ? found[0] : undefined;
}

/** The user, or a NotFoundError. */
export async function getUser(userId: string): Promise<User> {
  const user = (await db()(TABLE).select(COLUMNS).where({ user_id: userId }).first()) as User | undefined;
  if (!user) throw new NotFoundError(`No user ${userId}.`);
  return user;
}

export interface NewUser {
  phone_number: string;
  display_name?: string | null;
  email?: string | null;
}

/** 409 naming body.email: the channels find people by email, so an address has one holder (claimableEmail). */
async function assertEmailFree(trx: Knex.Transaction, email: string | null | undefined, userId: string | undefined): Promise<void> {
  if (email && !(await claimableEmail(trx, email, userId))) {
    throw new ConflictError(`Another user has the email ${email}.`, [{ path: 'body.email', message: 'belongs to another user' }]);
  }
}

/** Creates a user; a phone number (or email) already taken is a ConflictError (naming the existing user for a number). */
export async function createUser(input: NewUser): Promise<User & { phone_number: string }> {
  try {
    return await db().transaction(async (trx) => {
      await assertEmailFree(trx, input.email, undefined);
      const [user] = await trx(TABLE)
        .insert({ phone_number: input.phone_number, display_name: input.display_name ?? null, email: input.email ?? null })
        .returning(COLUMNS);
      return user as User & { phone_number: string };
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const existing = await findUserByPhone(input.phone_number);
      throw new ConflictError(`A user with phone number ${input.phone_number} exists.`, [], { user_id: existing?.user_id });
    }
    throw err;
  }
}

/** Throws NotFoundError unless the user exists. */
export async function assertUserExists(userId: string): Promise<void> {
  await getUser(userId);
}

/**
 * Locks a user's row against concurrent session decisions (resolving serialises per user); false
 * when the user does not exist. FOR NO KEY UPDATE: sessions referencing the user can still be inserted.
 */
export async function lockUser(trx: Knex.Transaction, userId: string): Promise<boolean> {
  return Boolean(await trx(TABLE).select('user_id').where({ user_id: userId }).forNoKeyUpdate().first());
}

const PROFILE_COLUMNS = ['user_id', 'email', 'display_name', 'roles', 'timezone', 'phone_number as phone', 'notification_preferences'];

/** The profile, or a NotFoundError. */
export async function getProfile(userId: string): Promise<Profile> {
  const row = (await db()(TABLE).select(PROFILE_COLUMNS).where({ user_id: userId }).first()) as Profile | undefined;
  if (!row) throw new NotFoundError(`No user ${userId}.`);
  return { ...row, notification_preferences: notificationPreferencesSchema.parse(row.notification_preferences ?? {}) };
}

/**
 * Changes the editable fields. The phone number may only be removed here (null): a new one is set
 * once proven (shared/portal/phone-proof.ts), so a number routes nothing to an account that merely claims it.
 */
export async function updateProfile(userId: string, change: { timezone?: string; phone?: string | null; notification_preferences?: NotificationPreferences }): Promise<Profile> {
  const patch: Record<string, unknown> = {};
  if (change.timezone !== undefined) patch.timezone = change.timezone;
  if (change.notification_preferences !== undefined) patch.notification_preferences = JSON.stringify(change.notification_preferences);
  await db().transaction(async (trx) => {
    const current = (await trx(TABLE).select('phone_number').where({ user_id: userId }).forNoKeyUpdate().first()) as { phone_number: string | null } | undefined;
    if (!current) throw new NotFoundError(`No user ${userId}.`);
    // The profile's own number sent back unchanged is fine; another one must be proven first.
    if (typeof change.phone === 'string' && change.phone !== current.phone_number) {
      throw new ValidationError('A new phone number is set by proving it: POST /api/portal/profile/phone sends a code to it, POST /api/portal/profile/phone/verify enters it.', [
        { path: 'body.phone', message: 'must be proven with a code first (POST /api/portal/profile/phone); only null (remove) is accepted here' },
      ]);
    }
    if (Object.keys(patch).length) await trx(TABLE).where({ user_id: userId }).update(patch);
    if (change.phone === null) await setPhoneNumber(trx, userId, null);
  });
  return getProfile(userId);
}

/**
 * Sets or clears a user's phone number in the caller's transaction (a number another user has is a
 * unique violation); when it changes, the messaging-app windows follow (forgetWindowsOnPhoneChange).
 */
export async function setPhoneNumber(trx: Knex.Transaction, userId: string, phone: string | null): Promise<void> {
  const current = (await trx(TABLE).select('phone_number').where({ user_id: userId }).first()) as { phone_number: string | null } | undefined;
  if (!current || current.phone_number === phone) return;
  await trx(TABLE).where({ user_id: userId }).update({ phone_number: phone });
  await forgetWindowsOnPhoneChange(trx, userId, phone);
}

/** What the identity provider owns of a person, copied onto their user at each sign-in. */
export interface ProviderCopies {
  display_name: string;
  email: string | null;
  roles: string[];
}

/** Locks the user of a provider subject, if that person has signed in before. */
export async function lockUserBySubject(trx: Knex.Transaction, subject: string): Promise<string | undefined> {
  return ((await trx(TABLE).select('user_id').where({ idp_subject: subject }).forUpdate().first()) as { user_id: string } | undefined)?.user_id;
}

/** Locks the oldest user with this email (any case) not yet linked to a provider subject. */
export async function lockUnlinkedUserByEmail(trx: Knex.Transaction, email: string): Promise<string | undefined> {
  const row = (await trx(TABLE)
    .select('user_id')
    .whereRaw('lower(email) = lower(?)', [email])
    .whereNull('idp_subject')
    .orderBy('created_at')
    .forUpdate()
    .first()) as { user_id: string } | undefined;
  return row?.user_id;
}

/**
 * The provider's email as this user may hold it: the address, or null when another user holds it
 * already (any case). The first holder keeps it, so a second account claiming the address never makes
 * its owner unmatchable by the channels (findUserByEmail matches only a single holder). The
 * transaction-scoped lock orders concurrent claims of one address.
 */
export async function claimableEmail(trx: Knex.Transaction, email: string | null, userId: string | undefined): Promise<string | null> {
  if (!email) return null;
  await trx.raw('select pg_advisory_xact_lock(hashtext(lower(?)))', [email]);
  const holder = trx(TABLE).select('user_id').whereRaw('lower(email) = lower(?)', [email]);
  if (userId) holder.whereNot({ user_id: userId });
  return (await holder.first()) ? null : email;
}

/** Links a user to a provider subject and refreshes the provider's copies. */
export async function linkSignedInUser(trx: Knex.Transaction, userId: string, subject: string, copies: ProviderCopies): Promise<void> {
  await trx(TABLE).where({ user_id: userId }).update({ ...copies, idp_subject: subject });
}

/** Creates the user of a person the channels never met; returns its id. */
export async function insertSignedInUser(trx: Knex.Transaction, subject: string, copies: ProviderCopies): Promise<string> {
  const [created] = (await trx(TABLE).insert({ ...copies, idp_subject: subject }).returning(['user_id'])) as Array<{ user_id: string }>;
  return created!.user_id;
}

export interface UserChanges {
  display_name?: string | null;
  phone_number?: string;
  email?: string | null;
}

/**
 * Changes a user (an integration with the API key vouches for the number). A new phone number must be
 * free (409 naming the user who has it); the messaging-app windows follow it (setPhoneNumber).
 */
export async function updateUser(userId: string, changes: UserChanges): Promise<User> {
  try {
    return await db().transaction(async (trx) => {
      if (!(await lockUser(trx, userId))) throw new NotFoundError(`No user ${userId}.`);
      await assertEmailFree(trx, changes.email, userId);
      const { phone_number: phone, ...rest } = changes;
      const set = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
      if (Object.keys(set).length) await trx(TABLE).where({ user_id: userId }).update(set);
      if (phone !== undefined) await setPhoneNumber(trx, userId, phone);
      return (await trx(TABLE).select(COLUMNS).where({ user_id: userId }).first()) as User;
    });
  } catch (err) {
    if (isUniqueViolation(err) && changes.phone_number) {
      const existing = await findUserByPhone(changes.phone_number);
      throw new ConflictError(`A user with phone number ${changes.phone_number} exists.`, [{ path: 'body.phone_number', message: 'belongs to another user' }], { user_id: existing?.user_id ?? null });
    }
    throw err;
  }
}

/** The person being erased, locked for the erasure's transaction; undefined when there is no such user. */
export interface ErasedUser {
  user_id: string;
  phone_number: string | null;
  email: string | null;
}

/** Locks a user for erasure and reads what finds their data in other domains (number, address). */
export async function lockUserForErasure(trx: Knex.Transaction, userId: string): Promise<ErasedUser | undefined> {
  return (await trx(TABLE).select('user_id', 'phone_number', 'email').where({ user_id: userId }).forUpdate().first()) as ErasedUser | undefined;
}

/** Deletes the user row; its foreign keys cascade to whatever the domains' erasers left. */
export async function deleteUser(trx: Knex.Transaction, userId: string): Promise<void> {
  await trx(TABLE).where({ user_id: userId }).delete();
}

/** Refreshes the provider's copies (name, email, roles) on the user of a provider subject, when there is one; an email another user holds is not taken (claimableEmail). */
export async function updateProviderCopies(subject: string, copies: { name: string; email: string | null; roles: string[] }): Promise<void> {
  await db().transaction(async (trx) => {
    const userId = await lockUserBySubject(trx, subject);
    if (!userId) return;
    const email = await claimableEmail(trx, copies.email, userId);
    await trx(TABLE).where({ user_id: userId }).update({ display_name: copies.name, email, roles: copies.roles });
  });
}

/** A user's roles as last copied from the identity provider (none for users the channels created); undefined for no such user. */
export async function rolesOfUser(userId: string): Promise<string[] | undefined> {
  const row = (await db()(TABLE).select('roles').where({ user_id: userId }).first()) as { roles: string[] } | undefined;
  return row?.roles;
}

/** A user's voice PIN hash (null: none set); undefined for no such user. */
export async function voicePinHashOf(userId: string): Promise<string | null | undefined> {
  const row = (await db()(TABLE).select('voice_pin_hash').where({ user_id: userId }).first()) as { voice_pin_hash: string | null } | undefined;
  return row ? row.voice_pin_hash : undefined;
}

/** Sets (or with null removes) a user's voice PIN hash; false when there is no such user. */
export async function setVoicePinHash(userId: string, hash: string | null): Promise<boolean> {
  return (await db()(TABLE).where({ user_id: userId }).update({ voice_pin_hash: hash })) > 0;
}
