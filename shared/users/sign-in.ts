/** Who a person signing in through the identity provider is: the matching rule, over the people store. */
import { db } from '../db/index.js';
import { insertSignedInUser, linkSignedInUser, lockUnlinkedUserByEmail, lockUserBySubject } from './users.store.js';

export interface SignedInIdentity {
  subject: string;
  name: string;
  email: string | null;
  email_verified: boolean;
  roles: string[];
}

/**
 * The user of a person who signed in: matched by provider subject, else by verified email (an
 * account the messaging channels created first), else created. Email, name and roles are copied
 * from the provider every time, since the provider owns them.
 */
export async function upsertSignedInUser(person: SignedInIdentity): Promise<string> {
  return db().transaction(async (trx) => {
    const copies = { display_name: person.name, email: person.email, roles: person.roles };
    let userId = await lockUserBySubject(trx, person.subject);
    if (!userId && person.email && person.email_verified) userId = await lockUnlinkedUserByEmail(trx, person.email);
    if (userId) {
      await linkSignedInUser(trx, userId, person.subject, copies);
      return userId;
    }
    return insertSignedInUser(trx, person.subject, copies);
  });
}
