/**
 * Phone verification codes are capped per number and over everyone, not only per person: many
 * accounts can neither flood one phone with codes nor run up the messaging bill.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { freshPhone } from '../helpers/chatapp.js';
import { portalUserWithoutPhone } from '../helpers/people.js';

process.env.LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR = '2';
process.env.LIMIT_PHONE_CODES_TOTAL_PER_HOUR = '5';

let api: Platform;
beforeAll(async () => {
  api = await startPlatform({ workers: false });
});

const askCode = (userId: string, phone: string) => api.request('/api/portal/profile/phone', { method: 'POST', json: { phone }, headers: { 'X-User-Id': userId } });

describe('phone code caps', () => {
  it('per number: the third person asking a code for one number within the hour gets 429; over everyone, the sixth code of the hour does', async () => {
    const victim = freshPhone();
    expect((await askCode(await portalUserWithoutPhone(), victim)).status).toBe(202);
    expect((await askCode(await portalUserWithoutPhone(), victim)).status).toBe(202);
    const flooding = await askCode(await portalUserWithoutPhone(), victim);
    expect(flooding.status).toBe(429);
    expect(Number(flooding.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await flooding.json()).detail).toContain('LIMIT_PHONE_CODES_PER_NUMBER_PER_HOUR');

    // Two codes so far count over everyone: three more, each a new person and number, then 429.
    for (let i = 0; i < 3; i++) expect((await askCode(await portalUserWithoutPhone(), freshPhone())).status).toBe(202);
    const over = await askCode(await portalUserWithoutPhone(), freshPhone());
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await over.json()).detail).toContain('LIMIT_PHONE_CODES_TOTAL_PER_HOUR');
    // The refusals are counted by limit.
    const metrics = await (await api.request('/metrics')).text();
    expect(metrics).toMatch(/switchboard_limit_refusals_total\{limit="phoneCodesPerNumber"\} 1/);
    expect(metrics).toMatch(/switchboard_limit_refusals_total\{limit="phoneCodesTotal"\} 1/);
  });
});
