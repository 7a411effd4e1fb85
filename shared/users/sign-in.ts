/** Who a person signing in through the identity provider is: the matching rule, over the people store. */
import { db } from '../db/index.js';
import { claimableEmail, insertSignedInUser, linkSignedInUser, lockUnlinkedUserByEmail, lockUserBySubject } from './users.store.js';

export interface SignedInIdentity {
  subject: string;
  name: string;
  email: string | null;
  email_verified: boolean;
  roles: string[];
}

/**
 * The user of a person who signed in: matched by provider subject, else by verified email (an
 * account the messaging channels created first), else created. Name and roles are copied from the
 * provider every time, since the provider owns them; the email only when the provider marks it
 * verified (the email and Slack channels trust users.email) and no other user holds it already.
 */
export async function upsertSignedInUser(person: SignedInIdentity): Promise<string> {
  return db().transaction(async (trx) => {
    const verified = person.email_verified ? person.email : null;
    let userId = await lockUserBySubject(trx, person.subject);
    if (!userId && verified) userId = await lockUnlinkedUserByEmail(trx, verified);
    const copies = { display_name: person.name, email: await claimableEmail(trx, verified, userId), roles: person.roles };
    if (userId) {
      await linkSignedInUser(trx, userId, person.subject, copies);
      return userId;
    }
    return insertSignedInUser(trx, person.subject, copies);
  });
}
