/** Query module of `contacts`: a person's contact list. Every query is scoped to its owner. */
import { db } from '../db/index.js';
import type { Contact } from './portal.schemas.js';

const TABLE = 'contacts';
const COLUMNS = ['contact_id', 'name', 'email', 'phone', 'company', 'tags', 'favorite', 'created_at', 'updated_at'];

interface ContactRow extends Omit<Contact, 'created_at' | 'updated_at'> {
  created_at: Date;
  updated_at: Date;
}

const toDomain = (r: ContactRow): Contact => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

export interface ContactFilters {
  /** Matches name, email, phone or company (case-insensitive substring). */
  search?: string;
  /** Contacts carrying every one of these tags. */
  tags?: string[];
  favorite?: boolean;
}

const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listContacts(ownerId: string, f: ContactFilters): Promise<Contact[]> {
  const q = db()(TABLE).select(COLUMNS).where({ owner_id: ownerId });
  if (f.search) {
    const p = likePattern(f.search);
    q.where((w) => w.whereILike('name', p).orWhereILike('email', p).orWhereILike('phone', p).orWhereILike('company', p));
  }
  if (f.tags?.length) q.whereRaw('tags @> ?::text[]', [f.tags]);
  if (f.favorite !== undefined) q.where({ favorite: f.favorite });
  const rows = (await q.orderBy([{ column: 'favorite', order: 'desc' }, { column: 'name' }, { column: 'contact_id' }]).limit(1000)) as ContactRow[];
  return rows.map(toDomain);
}

export async function findContact(ownerId: string, contactId: string): Promise<Contact | undefined> {
  const row = (await db()(TABLE).select(COLUMNS).where({ owner_id: ownerId, contact_id: contactId }).first()) as ContactRow | undefined;
  return row && toDomain(row);
}

export type ContactChange = Partial<Omit<Contact, 'contact_id' | 'created_at' | 'updated_at'>>;

export async function insertContact(ownerId: string, input: ContactChange & { name: string }): Promise<Contact> {
  const [row] = (await db()(TABLE).insert({ ...input, owner_id: ownerId }).returning(COLUMNS)) as ContactRow[];
  return toDomain(row!);
}

/** The changed contact, or undefined when the owner has no such contact. */
export async function updateContact(ownerId: string, contactId: string, change: ContactChange): Promise<Contact | undefined> {
  if (!Object.keys(change).length) return findContact(ownerId, contactId);
  const [row] = (await db()(TABLE).where({ owner_id: ownerId, contact_id: contactId }).update(change).returning(COLUMNS)) as ContactRow[];
  return row && toDomain(row);
}

export async function deleteContact(ownerId: string, contactId: string): Promise<boolean> {
  return (await db()(TABLE).where({ owner_id: ownerId, contact_id: contactId }).delete()) > 0;
}
