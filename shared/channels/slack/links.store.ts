/**
 * The Slack links store: which platform user a Slack user (of a workspace) is, as that person
 * confirmed it while signed in, and the link requests the bot hands unlinked Slack users (a token
 * kept as its SHA-256, usable once, until it expires). Deleting the user deletes their links.
 */
import { createHash, randomBytes } from 'node:crypto';
import { db } from '../../db/index.js';

const LINKS = 'slack_links';
const REQUESTS = 'slack_link_requests';

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** The platform user a Slack user of a workspace is linked to, or undefined. */
export async function linkedUserId(teamId: string, slackUserId: string): Promise<string | undefined> {
  const row = (await db()(LINKS).select('user_id').where({ team_id: teamId, slack_user_id: slackUserId }).first()) as { user_id: string } | undefined;
  return row?.user_id;
}

/** A new link request for a Slack user, valid `minutes`; the token goes in the link and nowhere else. */
export async function createLinkRequest(teamId: string, slackUserId: string, minutes: number): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  const k = db();
  // Expired requests are dropped as new ones are made, so the table stays small.
  await k(REQUESTS).where('expires_at', '<', k.fn.now()).delete();
  await k(REQUESTS).insert({ token_hash: tokenHash(token), team_id: teamId, slack_user_id: slackUserId, expires_at: k.raw('now() + make_interval(mins => ?)', [minutes]) });
  return token;
}

export interface LinkRequest {
  team_id: string;
  slack_user_id: string;
  expires_at: Date;
}

/** The unexpired request of a token, or undefined. */
export async function findLinkRequest(token: string): Promise<LinkRequest | undefined> {
  const k = db();
  return (await k(REQUESTS).select('team_id', 'slack_user_id', 'expires_at').where({ token_hash: tokenHash(token) }).where('expires_at', '>', k.fn.now()).first()) as LinkRequest | undefined;
}

/**
 * Uses a token once: links its Slack user to `userId` (replacing an earlier link of that Slack user)
 * and returns the request; undefined when the token is unknown, used or expired.
 */
export async function confirmLink(token: string, userId: string): Promise<LinkRequest | undefined> {
  return db().transaction(async (trx) => {
    const [request] = (await trx(REQUESTS).where({ token_hash: tokenHash(token) }).where('expires_at', '>', trx.fn.now()).delete().returning(['team_id', 'slack_user_id', 'expires_at'])) as LinkRequest[];
    if (!request) return undefined;
    await trx(LINKS)
      .insert({ team_id: request.team_id, slack_user_id: request.slack_user_id, user_id: userId })
      .onConflict(['team_id', 'slack_user_id'])
      .merge({ user_id: userId, updated_at: trx.fn.now() });
    return request;
  });
}
