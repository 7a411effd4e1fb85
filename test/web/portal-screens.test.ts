/**
 * The portal's screens in real Chromium: a person signs in through the embedded provider's form,
 * keeps contacts, uploads documents and watches them get indexed on the page, searches them, and
 * edits the profile; another person reaching those rows by URL sees not-found (and the API 404).
 */
// needs: chromium
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, screenshot, signInAt } from '../helpers/browser.js';
import { signIn, startIdentity, type SignedIn } from '../helpers/identity.js';
import { makeDocx, makePdf } from '../helpers/documents.js';
import { eventually } from '../helpers/eventually.js';
import { startLocalTwilio } from '../helpers/local-twilio-server.js';
import { configureChatapp } from '../helpers/chatapp.js';

process.env.DOCUMENT_MAX_BYTES = String(64 * 1024);
// Phone codes go out through the messaging-app client to a local provider, as the approved template.
const twilio = await startLocalTwilio();
configureChatapp(twilio.baseUrl);
const codeTemplateSid = 'HX' + 'd'.repeat(32);
process.env.CHATAPP_TEMPLATE_SIDS = `phone_verification=${codeTemplateSid}`;
afterAll(() => twilio.close());
const accounts = {
  pat: { login: 'pat', password: 'pat', name: 'Pat Portal', email: 'pat@example.test', roles: [] },
  quinn: { login: 'quinn', password: 'quinn', name: 'Quinn Other', email: 'quinn@example.test', roles: [] },
};
const idp = await startIdentity({ accounts });
const { startPlatform } = await import('../helpers/platform.js');
const app = await startPlatform({ port: idp.appPort });
const { queue } = await import('../../shared/queues.js');
const { db } = await import('../../shared/db/index.js');
const browser = await launchBrowser();

let context: BrowserContext;
let page: Page;
let patApi: SignedIn;
let quinnApi: SignedIn;

const json = async <T = any>(res: Response, status = 200): Promise<T> => {
  const body = await res.text();
  expect(res.status, body).toBe(status);
  return (body ? JSON.parse(body) : undefined) as T;
};
const goto = async (path: string) => {
  await page.goto(app.url + path);
  await page.getByRole('heading', { level: 2 }).first().waitFor();
};
/** The names linking to each row's own page, top to bottom. */
const rowNames = (table: string) => page.getByRole('table', { name: table }).locator('tbody tr a[href^="/"]').allTextContents();
/** The page's URL changes only through the app (history), never a reload: counts main-frame navigations. */
function countNavigations(): () => string[] {
  const seen: string[] = [];
  const onNav = (f: { url: () => string }) => f === page.mainFrame() && seen.push(f.url());
  page.on('framenavigated', onNav);
  return () => (page.off('framenavigated', onNav), seen);
}

beforeAll(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signInAt(context, app.url, '/portal', accounts.pat);
  [patApi, quinnApi] = [await signIn(app.url, accounts.pat), await signIn(app.url, accounts.quinn)];
}, 120_000);

describe('portal screens in Chromium', () => {
  it('home: the navigation names all seven portal pages, and chat is one click away', async () => {
    await page.getByRole('heading', { name: 'Hello, Pat Portal' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main navigation' });
    for (const [name, href] of [
      ['Portal home', '/portal'], ['Contacts', '/contacts'], ['Documents', '/documents'], ['Cases', '/cases'], ['History', '/history'], ['Automations', '/automations'], ['Profile', '/profile'],
    ]) expect(await nav.getByRole('link', { name }).getAttribute('href'), name).toBe(href);
    expect(await page.getByRole('link', { name: 'Chat with the assistant' }).getAttribute('href')).toBe('/portal/chat');
    await page.getByText('No open cases.').waitFor();
    await page.getByText('No documents yet.').waitFor();
  }, 120_000);

  it('contacts: add with tags, field errors beside their fields, filter by tag, search and favorites in the URL, edit, delete', async () => {
    await goto('/contacts');
    await page.getByText('No contacts yet').waitFor();
    async function add(c: { name: string; email?: string; phone?: string; company?: string; tags: string[]; favorite?: boolean }) {
      await page.getByRole('button', { name: 'New contact' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name').fill(c.name);
      if (c.email) await dialog.getByLabel('Email').fill(c.email);
      if (c.phone) await dialog.getByLabel('Phone').fill(c.phone);
      if (c.company) await dialog.getByLabel('Company').fill(c.company);
      for (const t of c.tags) {
        await dialog.getByLabel('Tags').fill(t);
        await dialog.getByLabel('Tags').press('Enter');
      }
      await dialog.getByLabel('Name').click(); // closes the tag suggestions, which cover the buttons
      if (c.favorite) await dialog.getByRole('switch', { name: 'Favorite' }).check();
      await dialog.getByRole('button', { name: 'Add contact' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page.getByRole('link', { name: c.name }).waitFor();
    }
    await add({ name: 'Ada Lovelace', email: 'ada@example.test', phone: '+442071234567', company: 'Analytical Engines', tags: ['math', 'vip'], favorite: true });
    await add({ name: 'Charles Babbage', email: 'charles@example.test', company: 'Difference Works', tags: ['math'] });
    await add({ name: 'Grace Hopper', company: 'Navy', tags: ['navy'] });
    const stored = (await json(await patApi.request('/api/portal/contacts'))).contacts;
    expect(stored.find((c: { name: string }) => c.name === 'Ada Lovelace')).toMatchObject({ tags: ['math', 'vip'], favorite: true, phone: '+442071234567' });

    // The API's 400 names the fields; each message sits under its own field.
    await page.getByRole('button', { name: 'New contact' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Phone').fill('12');
    await dialog.getByLabel('Email').fill('not-an-email');
    await dialog.getByRole('button', { name: 'Add contact' }).click();
    await dialog.getByText('must be an E.164 phone number such as +14155550100').waitFor();
    expect(await dialog.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByLabel('Company').getAttribute('aria-invalid')).not.toBe('true');
    await screenshot(page, 'portal-contacts-field-errors');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const filters = page.getByRole('combobox', { name: 'Tags' });
    await filters.fill('vip');
    await filters.press('Enter');
    await expect.poll(() => rowNames('Contacts')).toEqual(['Ada Lovelace']);
    expect(page.url()).toContain('tags=vip');
    await goto('/contacts?tags=math');
    await expect.poll(() => rowNames('Contacts')).toEqual(['Ada Lovelace', 'Charles Babbage']);
    await goto('/contacts');
    await page.getByLabel('Search').fill('difference');
    await page.getByLabel('Search').press('Enter');
    await expect.poll(() => rowNames('Contacts')).toEqual(['Charles Babbage']);
    await goto('/contacts');
    // The box follows the URL, which the router updates in a transition: click, then see it checked.
    await page.getByLabel('Favorites only').click();
    await expect.poll(() => page.getByLabel('Favorites only').isChecked()).toBe(true);
    await expect.poll(() => rowNames('Contacts')).toEqual(['Ada Lovelace']);
    expect(page.url()).toContain('favorite=true');

    await goto('/contacts');
    await page.getByRole('button', { name: 'Favorite Grace Hopper' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Favorite Grace Hopper' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('button', { name: 'Edit Grace Hopper' }).click();
    await page.getByRole('dialog').getByLabel('Company').fill('US Navy');
    await page.getByRole('dialog').getByRole('button', { name: 'Save contact' }).click();
    await page.getByRole('cell', { name: 'US Navy' }).waitFor();
    await page.getByRole('button', { name: 'Delete Charles Babbage' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => rowNames('Contacts')).toEqual(['Ada Lovelace', 'Grace Hopper']);
    await screenshot(page, 'portal-contacts');
  }, 120_000);

  it('documents: a PDF and a DOCX reach indexed on the page without reload, a corrupt PDF shows its failure; search finds each; 413 is shown', async () => {
    await goto('/documents');
    await page.getByText('No documents yet').waitFor();
    const navigations = countNavigations();
    // The indexing worker waits until the page has shown the uploads pending, so the page is seen to change by itself.
    // Pausing is idempotent: on a loaded machine a first try can outlast the 1 s Redis command timeout.
    const indexing = queue('portal');
    await eventually(() => indexing.pause().then(() => true, () => false), 15_000, 'the portal queue paused');
    const form = page.getByRole('form', { name: 'Upload a document' });
    async function upload(name: string, mimeType: string, buffer: Buffer, fields: { category?: string; tags?: string[] } = {}) {
      await form.locator('input[type=file]').setInputFiles({ name, mimeType, buffer });
      if (fields.category) await form.getByLabel('Category').fill(fields.category);
      for (const t of fields.tags ?? []) {
        await form.getByLabel('Tags').fill(t);
        await form.getByLabel('Tags').press('Enter');
      }
      await form.getByRole('button', { name: 'Upload' }).click();
    }
    await upload('census.pdf', 'application/pdf', makePdf('The quarterly llama census counted forty two llamas in the northern paddock.'), { category: 'farm', tags: ['animals'] });
    await page.getByRole('link', { name: 'census.pdf' }).waitFor();
    await upload('policy.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', makeDocx(['Refund policy', 'Customers may return turquoise umbrellas within thirty days.']));
    await page.getByRole('link', { name: 'policy.docx' }).waitFor();
    await upload('broken.pdf', 'application/pdf', Buffer.from('%PDF-1.4\nthis is not really a pdf'));
    await page.getByRole('link', { name: 'broken.pdf' }).waitFor();

    const status = (filename: string) => page.getByLabel(`Indexing status of ${filename}`).textContent();
    for (const f of ['census.pdf', 'policy.docx', 'broken.pdf']) expect(await status(f)).toBe('pending');
    await screenshot(page, 'portal-documents-pending');
    await eventually(() => indexing.resume().then(() => true, () => false), 15_000, 'the portal queue resumed');
    const seen = new Set<string | null>(['pending']);
    await expect.poll(async () => { const now = await status('census.pdf'); seen.add(now); return now; }, { timeout: 30_000 }).toBe('indexed');
    await expect.poll(() => status('policy.docx'), { timeout: 30_000 }).toBe('indexed');
    await expect.poll(() => status('broken.pdf'), { timeout: 30_000 }).toBe('failed');
    console.log(`census.pdf statuses seen on the page: ${[...seen].join(' → ')}`);
    await page.getByRole('row', { name: /broken\.pdf/ }).getByText(/PDF file could not be read/).waitFor();
    expect(navigations()).toEqual([]);
    await page.getByRole('row', { name: /census\.pdf/ }).getByText('farm').waitFor();
    await screenshot(page, 'portal-documents');

    const searchFor = async (q: string) => {
      await page.getByLabel('Search contents').fill(q);
      await page.getByLabel('Search contents').press('Enter');
      const results = page.getByRole('region', { name: 'Search results' });
      await results.getByText(`for “${q}”`).waitFor();
      await results.getByRole('listitem').first().waitFor();
      return results;
    };
    const llamas = await searchFor('llama census');
    expect(await llamas.getByRole('listitem').getByRole('link').allTextContents()).toEqual(['census.pdf']);
    expect(await llamas.locator('mark').first().textContent()).toBe('llama');
    expect(page.url()).toContain('q=llama+census');
    await screenshot(page, 'portal-documents-search');
    const umbrellas = await searchFor('turquoise umbrellas');
    expect(await umbrellas.getByRole('listitem').getByRole('link').allTextContents()).toEqual(['policy.docx']);
    await umbrellas.getByText(/return/).waitFor();

    // Filters are shareable URLs.
    await goto('/documents?rag_status=failed');
    await expect.poll(() => rowNames('Documents')).toEqual(['broken.pdf']);
    await goto('/documents?tags=animals&category=farm');
    await expect.poll(() => rowNames('Documents')).toEqual(['census.pdf']);
    await goto('/documents?text=POLICY');
    await expect.poll(() => rowNames('Documents')).toEqual(['policy.docx']);

    // Over DOCUMENT_MAX_BYTES: the refusal stands beside the file field and nothing is listed.
    await goto('/documents');
    await upload('big.txt', 'text/plain', Buffer.alloc(64 * 1024 + 1, 'a'));
    await form.getByText(/Too large: The document is larger than 65536 bytes/).waitFor();
    await screenshot(page, 'portal-documents-413');
    expect(await page.getByRole('link', { name: 'big.txt' }).count()).toBe(0);

    // Re-index goes back through the states to indexed; delete asks first.
    await page.getByRole('button', { name: 'Re-index census.pdf' }).click();
    await expect.poll(() => status('census.pdf'), { timeout: 30_000 }).toBe('indexed');
    await page.getByRole('button', { name: 'Delete broken.pdf' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => rowNames('Documents')).toEqual(['policy.docx', 'census.pdf']);

    await page.getByRole('link', { name: 'census.pdf' }).click();
    await page.getByRole('heading', { name: 'census.pdf' }).waitFor();
    await page.getByLabel('Indexing status of census.pdf').getByText('indexed').waitFor();
    await screenshot(page, 'portal-document-detail');
  }, 120_000);

  it('profile: read-only provider fields; an edit persists across a reload; a bad timezone shows beside its field; a phone is set once its code is entered, a taken one never', async () => {
    const timezone = page.getByRole('combobox', { name: 'Timezone' });
    await goto('/profile');
    const provider = page.getByRole('region', { name: 'From your identity provider' });
    await provider.getByText('pat@example.test').waitFor();
    await provider.getByText('Pat Portal').waitFor();
    await provider.getByText('user', { exact: true }).waitFor();
    await timezone.fill('Europe/Paris');
    await timezone.press('Escape');
    await page.getByLabel('SMS').uncheck();
    await page.getByRole('switch', { name: 'Quiet hours (no notifications)' }).check();
    await page.getByLabel('Quiet from').fill('21:30');
    await page.getByLabel('Quiet until').fill('06:45');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Profile saved').waitFor();
    expect(await json(await patApi.request('/api/portal/profile'))).toMatchObject({
      timezone: 'Europe/Paris',
      phone: null,
      notification_preferences: { channels: { email: true, sms: false, chatapp: true, push: true }, quiet_hours: { enabled: true, start: '21:30', end: '06:45' } },
    });

    // A new number: the code sent to it (through the messaging-app client) is entered; a wrong one is refused beside the field.
    const phone = page.getByLabel('Phone', { exact: true });
    const codeSentTo = (number: string) =>
      eventually(async () => {
        const sent = twilio.messages.filter((m) => m.params.To === `whatsapp:${number}` && m.params.ContentSid === codeTemplateSid).at(-1);
        return sent && (JSON.parse(sent.params.ContentVariables!) as { 1: string })[1];
      }, 15_000, `the code sent to ${number}`);
    await phone.fill('+33612345678');
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText('Code sent to +33612345678').waitFor();
    const code = await codeSentTo('+33612345678');
    expect((await json(await patApi.request('/api/portal/profile'))).phone).toBeNull();
    const codeInput = page.getByLabel('Code', { exact: true });
    await codeInput.fill(code === '000000' ? '000001' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('is wrong or has expired').waitFor();
    expect(await codeInput.getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'portal-profile-code-entry');
    await codeInput.fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('Messages from +33612345678 reach you.').waitFor();
    expect((await json(await patApi.request('/api/portal/profile'))).phone).toBe('+33612345678');

    await page.reload();
    await timezone.waitFor();
    expect(await timezone.inputValue()).toBe('Europe/Paris');
    expect(await phone.inputValue()).toBe('+33612345678');
    expect(await page.getByLabel('SMS').isChecked()).toBe(false);
    expect(await page.getByLabel('Email', { exact: true }).isChecked()).toBe(true);
    expect(await page.getByLabel('Quiet from').inputValue()).toBe('21:30');
    await screenshot(page, 'portal-profile');

    await timezone.fill('Mars/Olympus_Mons');
    await timezone.press('Escape');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('must be an IANA time zone name such as Europe/Paris').waitFor();
    expect(await timezone.getAttribute('aria-invalid')).toBe('true');

    // Another person's number: the page says the same as for a free one, and no code proves it.
    const { user_id: quinnId } = await json(await quinnApi.request('/api/portal/profile'));
    await db()('users').where({ user_id: quinnId }).update({ phone_number: '+14155550123' });
    await phone.fill('+14155550123');
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText('Code sent to +14155550123').waitFor();
    await codeInput.fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('is wrong or has expired').waitFor();
    await screenshot(page, 'portal-profile-field-errors');
    expect(twilio.messages.filter((m) => m.params.To === 'whatsapp:+14155550123')).toHaveLength(0);
    expect((await json(await patApi.request('/api/portal/profile'))).phone).toBe('+33612345678');
  }, 120_000);

  it("another person opening someone's document or contact by URL sees not-found, and the API answers 404", async () => {
    const doc = (await json(await patApi.request('/api/portal/documents'))).documents[0];
    const contact = (await json(await patApi.request('/api/portal/contacts'))).contacts[0];
    expect((await quinnApi.request(`/api/portal/documents/${doc.document_id}`)).status).toBe(404);
    expect((await quinnApi.request(`/api/portal/documents/${doc.document_id}/content`)).status).toBe(404);
    expect((await quinnApi.request(`/api/portal/contacts/${contact.contact_id}`)).status).toBe(404);
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const quinn = await signInAt(other, app.url, `/documents/${doc.document_id}`, accounts.quinn);
    await quinn.getByText(`No document ${doc.document_id}.`).waitFor();
    expect(await quinn.getByText(doc.filename).count()).toBe(0);
    await quinn.goto(`${app.url}/contacts/${contact.contact_id}`);
    await quinn.getByText(`No contact ${contact.contact_id}.`).waitFor();
    expect(await quinn.getByText(contact.name).count()).toBe(0);
    await screenshot(quinn, 'portal-not-found');
    await other.close();
  }, 120_000);

  it('home and a narrow screen: open cases and documents on the home page; navigation behind the menu on a phone', async () => {
    await json(await patApi.request('/api/portal/cases', { method: 'POST', json: { title: 'Printer on fire', description: 'Smoke', priority: 'P2' } }), 201);
    await goto('/portal');
    const cases = page.getByRole('table', { name: 'Open cases' });
    await cases.getByRole('link', { name: 'Printer on fire' }).waitFor();
    expect(await cases.getByRole('link', { name: 'Printer on fire' }).getAttribute('href')).toMatch(/^\/cases\/[0-9a-f-]{36}$/);
    await page.getByLabel('Open case count').getByText('(1)').waitFor();
    await page.getByLabel('Indexing status of census.pdf').getByText('indexed').waitFor();
    await screenshot(page, 'portal-home');

    // A phone: lists become cards, nothing is wider than the screen, the navigation sits behind the menu button.
    await page.setViewportSize({ width: 390, height: 844 });
    const fitsTheScreen = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    await goto('/documents');
    await page.getByRole('list', { name: 'Documents' }).getByRole('link', { name: 'census.pdf' }).waitFor();
    expect(await fitsTheScreen()).toBe(true);
    await screenshot(page, 'portal-documents-narrow');
    await page.getByRole('button', { name: 'Toggle navigation' }).click();
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Contacts' }).click();
    await page.waitForURL(`${app.url}/contacts`);
    await page.getByRole('list', { name: 'Contacts' }).getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    expect(await fitsTheScreen()).toBe(true);
    await screenshot(page, 'portal-contacts-narrow');
    await goto('/portal');
    await page.getByRole('link', { name: 'Printer on fire' }).waitFor();
    expect(await fitsTheScreen()).toBe(true);
    await screenshot(page, 'portal-home-narrow');
    await goto('/profile');
    await page.getByRole('button', { name: 'Save settings' }).waitFor();
    expect(await fitsTheScreen()).toBe(true);
    await screenshot(page, 'portal-profile-narrow');
  }, 120_000);
});
