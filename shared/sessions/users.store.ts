/** Query module of `users`: the user lookup record (E.164 phone number, unique). */
import type { Knex } from 'knex';
import { db, isUniqueViolation } from '../db/index.js';
import { ConflictError, NotFoundError } from '../errors.js';

const TABLE = 'users';
const COLUMNS: string[] = ['user_id', 'display_name', 'phone_number', 'email', 'created_at', 'updated_at'];

export interface User {
  user_id: string;
  display_name: string | null;
  phone_number: string;
  email: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The user with this E.164 phone number, or undefined. */
export async function findUserByPhone(phone: string): Promise<User | undefined> {
  return (await db()(TABLE).select(COLUMNS).where({ phone_number: phone }).first()) as User | undefined;
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

/** Creates a user; a phone number already taken is a ConflictError naming the existing user. */
export async function createUser(input: NewUser): Promise<User> {
  try {
    const [user] = await db()(TABLE)
      .insert({ phone_number: input.phone_number, display_name: input.display_name ?? null, email: input.email ?? null })
      .returning(COLUMNS);
    return user as User;
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
