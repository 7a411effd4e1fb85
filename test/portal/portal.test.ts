/**
 * The portal's API as its people use it: signed in through the embedded provider, each sees and
 * changes only their own rows; documents are indexed by the worker and found by search; cases
 * follow the support-desk rules; the agent answers from a document through search_documents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, signIn, type SignedIn } from '../helpers/identity.js';
import { startPlatform, type Platform } from '../helpers/platform.js';
import { eventually } from '../helpers/eventually.js';
import { useLocalLlm } from '../helpers/local-llm-server.js';
import { makeDocx, makePdf, uploadDocument } from '../helpers/documents.js';
import { db } from '../../shared/db/index.js';
import { summaryPrompt } from '../../shared/sessions/summary.js';

// A model that searches the user's documents for the question, then answers with the file name it got.
const llm = await useLocalLlm((req) => {
  if (req.body.messages[0]?.content === summaryPrompt) return { content: 'Asked how many llamas the census counted.' };
  const tool = req.body.messages.find((m) => m.role === 'tool');
  if (!tool) return { tool_calls: [{ id: 'call_1', name: 'search_documents', arguments: JSON.stringify({ query: 'llama census' }) }] };
  const hits = (JSON.parse(tool.content!) as { hits: Array<{ filename: string; snippet: string }> }).hits;
  return { content: hits.length ? `According to ${hits[0]!.filename}: ${hits[0]!.snippet}` : 'I found nothing in your documents.' };
});
process.env.DOCUMENT_MAX_BYTES = String(64 * 1024);

const accounts = {
  pat: { login: 'pat', password: 'pat', name: 'Pat Portal', email: 'pat@example.test', roles: [] },
  quinn: { login: 'quinn', password: 'quinn', name: 'Quinn Other', email: 'quinn@example.test', roles: [] },
  stella: { login: 'stella', password: 'stella', name: 'Stella Staff', email: 'stella@example.test', roles: ['staff'] },
  robin: { login: 'robin', password: 'robin', name: 'Robin Early', email: 'robin@example.test', roles: [] },
};

let app: Platform;
let pat: SignedIn;
let quinn: SignedIn;
let stella: SignedIn;

beforeAll(async () => {
  const idp = await startIdentity({ accounts });
  app = await startPlatform({ port: idp.appPort });
  [pat, quinn, stella] = [await signIn(app.url, accounts.pat), await signIn(app.url, accounts.quinn), await signIn(app.url, accounts.stella)];
});

const json = async <T = any>(res: Response, status: number): Promise<T> => {
  const body = await res.text();
  expect(res.status, body).toBe(status);
  return (body ? JSON.parse(body) : undefined) as T;
};

const upload = uploadDocument;

const indexed = (who: SignedIn, id: string) =>
  eventually(async () => {
    const doc = await json(await who.request(`/api/portal/documents/${id}`), 200);
    return ['indexed', 'failed'].includes(doc.rag_status) ? doc : undefined;
  }, 20_000, `document ${id} indexed or failed`);

describe('sign-in and profile', () => {
  it('signing in creates the user with the provider copies; a second sign-in matches the same user', async () => {
    const first = await json(await pat.request('/api/portal/profile'), 200);
    expect(first).toMatchObject({ email: 'pat@example.test', display_name: 'Pat Portal', roles: ['user'], timezone: 'UTC', phone: null });
    const again = await signIn(app.url, accounts.pat);
    expect((await json(await again.request('/api/portal/profile'), 200)).user_id).toBe(first.user_id);
    expect((await json(await stella.request('/api/portal/profile'), 200)).roles).toEqual(['staff', 'user']);
  });

  it('a verified email matches a user the messaging channel created first', async () => {
    const [existing] = await db()('users').insert({ phone_number: '+14155550199', email: 'ROBIN@example.test', display_name: 'R' }).returning(['user_id']);
    const robin = await signIn(app.url, accounts.robin);
    const profile = await json(await robin.request('/api/portal/profile'), 200);
    expect(profile).toMatchObject({ user_id: existing.user_id, phone: '+14155550199', display_name: 'Robin Early' });
  });

  it('a profile edit persists; a bad timezone is a field error; a new phone is not set without its code, null removes one', async () => {
    const prefs = { channels: { email: true, sms: false }, quiet_hours: { enabled: true, start: '22:00', end: '07:00' } };
    await json(await pat.request('/api/portal/profile', { method: 'PATCH', json: { timezone: 'Europe/Paris', notification_preferences: prefs } }), 200);
    expect(await json(await pat.request('/api/portal/profile'), 200)).toMatchObject({ timezone: 'Europe/Paris', notification_preferences: prefs });

    const badTz = await json(await quinn.request('/api/portal/profile', { method: 'PATCH', json: { timezone: 'Mars/Olympus' } }), 400);
    expect(badTz.errors.map((e: { path: string }) => e.path)).toEqual(['body.timezone']);
    const unproven = await json(await quinn.request('/api/portal/profile', { method: 'PATCH', json: { phone: '+33612345678' } }), 400);
    expect(unproven.errors.map((e: { path: string }) => e.path)).toEqual(['body.phone']);
    expect((await json(await quinn.request('/api/portal/profile'), 200)).phone).toBeNull();

    const { user_id } = await json(await pat.request('/api/portal/profile'), 200);
    await db()('users').where({ user_id }).update({ phone_number: '+33612345678' });
    // The current number sent back unchanged is fine; null removes it.
    await json(await pat.request('/api/portal/profile', { method: 'PATCH', json: { phone: '+33612345678', timezone: 'UTC' } }), 200);
    expect((await json(await pat.request('/api/portal/profile', { method: 'PATCH', json: { phone: null } }), 200)).phone).toBeNull();
  });
});

describe('contacts', () => {
  it('filters by tag, search text and favorites, only over my own contacts', async () => {
    const add = (who: SignedIn, c: object) => who.request('/api/portal/contacts', { method: 'POST', json: c }).then((r) => json(r, 201));
    await add(pat, { name: 'Ada Lovelace', email: 'ada@engines.test', company: 'Analytical', tags: ['vip', 'math'], favorite: true });
    await add(pat, { name: 'Charles Babbage', phone: '+442071234567', company: 'Difference Ltd', tags: ['math'] });
    await add(pat, { name: 'Grace Hopper', company: 'Navy', tags: ['vip'] });
    await add(quinn, { name: 'Ada Other', tags: ['vip', 'math'], favorite: true });
    const names = async (query: string) => (await json(await pat.request(`/api/portal/contacts${query}`), 200)).contacts.map((c: { name: string }) => c.name);
    expect(await names('?tags=math')).toEqual(['Ada Lovelace', 'Charles Babbage']);
    expect(await names('?tags=math,vip')).toEqual(['Ada Lovelace']);
    expect(await names('?search=difference')).toEqual(['Charles Babbage']);
    expect(await names('?favorite=true')).toEqual(['Ada Lovelace']);
    expect(await names('')).toEqual(['Ada Lovelace', 'Charles Babbage', 'Grace Hopper']);
    const bad = await json(await pat.request('/api/portal/contacts', { method: 'POST', json: { name: '', phone: '12' } }), 400);
    expect(bad.errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.name', 'body.phone']);
  });
});

describe('documents', () => {
  it('a PDF and a DOCX reach indexed and search finds a phrase from each; a corrupt PDF ends failed with its reason', async () => {
    const pdf = await json(await upload(pat, 'census.pdf', makePdf('The quarterly llama census counted forty two llamas in the northern paddock.'), 'application/pdf', { category: 'farm', tags: 'animals,2026' }), 201);
    expect(pdf).toMatchObject({ filename: 'census.pdf', category: 'farm', tags: ['animals', '2026'], rag_status: 'pending' });
    const docx = await json(await upload(pat, 'policy.docx', makeDocx(['Refund policy', 'Customers may return turquoise umbrellas within thirty days.']), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'), 201);
    const broken = await json(await upload(pat, 'broken.pdf', Buffer.from('%PDF-1.4\nthis is not really a pdf'), 'application/pdf'), 201);

    expect((await indexed(pat, pdf.document_id)).rag_status).toBe('indexed');
    expect((await indexed(pat, docx.document_id)).rag_status).toBe('indexed');
    const failed = await indexed(pat, broken.document_id);
    expect(failed.rag_status).toBe('failed');
    expect(failed.failure_reason).toMatch(/PDF file could not be read/);

    const search = async (who: SignedIn, q: string) => (await json(await who.request(`/api/portal/documents/search?q=${encodeURIComponent(q)}`), 200)).hits;
    const llamas = await search(pat, '"llama census"');
    expect(llamas.map((h: { filename: string }) => h.filename)).toEqual(['census.pdf']);
    expect(llamas[0].snippet).toContain('**llama**');
    const umbrellas = await search(pat, 'turquoise umbrellas');
    expect(umbrellas.map((h: { filename: string }) => h.filename)).toEqual(['policy.docx']);
    expect(await search(quinn, 'turquoise umbrellas')).toEqual([]);

    const download = await pat.request(`/api/portal/documents/${docx.document_id}/content`);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).subarray(0, 2).toString()).toBe('PK');

    // Re-index keeps one set of chunks; delete removes them and search no longer finds the text.
    await json(await pat.request(`/api/portal/documents/${pdf.document_id}/reindex`, { method: 'POST' }), 202);
    expect((await indexed(pat, pdf.document_id)).rag_status).toBe('indexed');
    expect(Number((await db()('document_chunks').where({ document_id: pdf.document_id }).count('* as n'))[0]!.n)).toBe(1);
    expect((await pat.request(`/api/portal/documents/${docx.document_id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await search(pat, 'turquoise umbrellas')).toEqual([]);
    expect(await db()('document_chunks').where({ document_id: docx.document_id })).toEqual([]);
  });

  it('an upload over DOCUMENT_MAX_BYTES answers 413 and stores nothing', async () => {
    const before = Number((await db()('documents').count('* as n'))[0]!.n);
    const res = await upload(quinn, 'big.txt', Buffer.alloc(64 * 1024 + 1, 'a'), 'text/plain');
    expect(res.status).toBe(413);
    expect((await res.json()).detail).toMatch(/DOCUMENT_MAX_BYTES/);
    expect(Number((await db()('documents').count('* as n'))[0]!.n)).toBe(before);
    expect(Number((await db()('document_contents').count('* as n'))[0]!.n)).toBe(before);
  });

  it('plain text, Markdown, HTML and CSV are indexed as text; a missing file part is a field error', async () => {
    const html = await json(await upload(quinn, 'page.html', Buffer.from('<html><style>.x{}</style><body><p>Saffron <b>tangerine</b> marmalade</p><script>var hidden = "zebra";</script></body></html>'), 'text/html'), 201);
    const csv = await json(await upload(quinn, 'stock.csv', Buffer.from('item,count\npaperclips,1200\n'), 'text/csv'), 201);
    expect((await indexed(quinn, html.document_id)).rag_status).toBe('indexed');
    expect((await indexed(quinn, csv.document_id)).rag_status).toBe('indexed');
    const hits = async (q: string) => (await json(await quinn.request(`/api/portal/documents/search?q=${q}`), 200)).hits.map((h: { filename: string }) => h.filename);
    expect(await hits('marmalade')).toEqual(['page.html']);
    expect(await hits('zebra')).toEqual([]);
    expect(await hits('paperclips')).toEqual(['stock.csv']);
    const form = new FormData();
    form.append('category', 'x');
    const missing = await json(await quinn.request('/api/portal/documents', { method: 'POST', body: form }), 400);
    expect(missing.errors).toEqual([{ path: 'body.file', message: 'is required' }]);
  });

  it('the upload is declared in the API reference as a form: a binary file part and its text fields, each checked by name', async () => {
    const doc = await json(await pat.request('/api/openapi.json'), 200);
    const form = doc.paths['/api/portal/documents'].post.requestBody.content['multipart/form-data'].schema;
    expect(form.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(Object.keys(form.properties).sort()).toEqual(['category', 'file', 'tags']);
    expect(form.required).toEqual(['file']);
    const tooLong = await json(await upload(pat, 'notes.txt', Buffer.from('x'), 'text/plain', { category: 'c'.repeat(101), tags: `ok,${'t'.repeat(51)}` }), 400);
    expect(tooLong.errors).toEqual([
      { path: 'body.category', message: 'at most 100 characters' },
      { path: 'body.tags', message: 'each tag at most 50 characters' },
    ]);
  });
});

describe('cases', () => {
  it('a P2 case: staff comments and sets in_progress, the requester sees both; an illegal move is 409 naming the allowed moves', async () => {
    const opened = await json(await pat.request('/api/portal/cases', { method: 'POST', json: { title: 'Printer on fire', description: 'Smoke', priority: 'P2' } }), 201);
    expect(opened).toMatchObject({ status: 'open', priority: 'P2', requester_name: 'Pat Portal', assignee_name: null });
    const id = opened.case_id;

    const staffView = await json(await stella.request('/api/portal/cases?status=open'), 200);
    expect(staffView.cases.map((c: { case_id: string }) => c.case_id)).toContain(id);
    const stellaId = (await json(await stella.request('/api/portal/profile'), 200)).user_id;
    expect(await json(await stella.request(`/api/portal/cases/${id}/assign`, { method: 'POST', json: { assignee_id: stellaId } }), 200)).toMatchObject({ assignee_name: 'Stella Staff' });
    await json(await stella.request(`/api/portal/cases/${id}/comments`, { method: 'POST', json: { body: 'Unplug it, we are on our way.' } }), 201);
    await json(await stella.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'in_progress' } }), 200);

    const seen = await json(await pat.request(`/api/portal/cases/${id}`), 200);
    expect(seen).toMatchObject({ status: 'in_progress', assignee_name: 'Stella Staff', allowed_moves: ['closed'] });
    expect(seen.comments).toMatchObject([{ author_name: 'Stella Staff', body: 'Unplug it, we are on our way.' }]);

    const illegal = await json(await pat.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'resolved' } }), 409);
    expect(illegal.detail).toContain('allowed: closed');
    expect(illegal.allowed_moves).toEqual(['closed']);
    const staffIllegal = await json(await stella.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'open' } }), 409);
    expect(staffIllegal.allowed_moves).toEqual(['waiting', 'resolved']);

    // Waiting for the requester: their answer puts the case back in progress; resolved can be reopened by them.
    await json(await stella.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'waiting' } }), 200);
    expect((await json(await pat.request(`/api/portal/cases/${id}/comments`, { method: 'POST', json: { body: 'Unplugged.' } }), 201)).status).toBe('in_progress');
    await json(await stella.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'resolved' } }), 200);
    expect((await json(await pat.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'open' } }), 200)).status).toBe('open');

    // Only staff assign: a requester gets 403 from the role check.
    expect((await pat.request(`/api/portal/cases/${id}/assign`, { method: 'POST', json: { assignee_id: null } })).status).toBe(403);
  });

  it('a closed case cannot be assigned: 409 naming current_status and the allowed moves, as a refused move does', async () => {
    const { case_id: id } = await json(await pat.request('/api/portal/cases', { method: 'POST', json: { title: 'Old request', description: 'Done', priority: 'P3' } }), 201);
    const stellaId = (await json(await stella.request('/api/portal/profile'), 200)).user_id;
    await json(await stella.request(`/api/portal/cases/${id}/status`, { method: 'POST', json: { status: 'closed' } }), 200);

    for (const assignee_id of [stellaId, null]) {
      const refused = await json(await stella.request(`/api/portal/cases/${id}/assign`, { method: 'POST', json: { assignee_id } }), 409);
      expect(refused).toMatchObject({ status: 409, current_status: 'closed', allowed_moves: [] });
    }
    expect(await json(await stella.request(`/api/portal/cases/${id}`), 200)).toMatchObject({ status: 'closed', assignee_name: null });
  });
});

describe('isolation', () => {
  it("a second person gets 404 for the first one's document, contact and case, by id, and cannot change them", async () => {
    const contact = await json(await pat.request('/api/portal/contacts', { method: 'POST', json: { name: 'Secret Friend' } }), 201);
    const doc = await json(await upload(pat, 'private.txt', Buffer.from('private words'), 'text/plain'), 201);
    const kase = await json(await pat.request('/api/portal/cases', { method: 'POST', json: { title: 'Mine' } }), 201);
    for (const path of [`/api/portal/contacts/${contact.contact_id}`, `/api/portal/documents/${doc.document_id}`, `/api/portal/documents/${doc.document_id}/content`, `/api/portal/cases/${kase.case_id}`]) {
      const res = await quinn.request(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('Secret Friend');
    }
    expect((await quinn.request(`/api/portal/contacts/${contact.contact_id}`, { method: 'PATCH', json: { name: 'x' } })).status).toBe(404);
    expect((await quinn.request(`/api/portal/documents/${doc.document_id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await quinn.request(`/api/portal/cases/${kase.case_id}/comments`, { method: 'POST', json: { body: 'hi' } })).status).toBe(404);
    expect((await quinn.request(`/api/portal/cases/${kase.case_id}/status`, { method: 'POST', json: { status: 'closed' } })).status).toBe(404);
    expect((await quinn.request('/api/portal/cases')).status).toBe(200);
    expect((await json(await quinn.request('/api/portal/cases'), 200)).cases.map((c: { title: string }) => c.title)).not.toContain('Mine');
    expect((await json(await pat.request(`/api/portal/contacts/${contact.contact_id}`), 200)).name).toBe('Secret Friend');
  });

  it('an API-key caller acts for the user named in X-User-Id', async () => {
    const patId = (await json(await pat.request('/api/portal/profile'), 200)).user_id;
    const listed = await json(await app.request('/api/portal/contacts?search=Lovelace', { headers: { 'X-User-Id': patId } }), 200);
    expect(listed.contacts.map((c: { name: string }) => c.name)).toEqual(['Ada Lovelace']);
    const missing = await json(await app.request('/api/portal/contacts'), 400);
    expect(missing.errors).toEqual([{ path: 'headers.x-user-id', message: 'must be a UUID' }]);
  });
});

describe('agent', () => {
  it('answers from a document through search_documents, scoped to the session user', async () => {
    const patId = (await json(await pat.request('/api/portal/profile'), 200)).user_id;
    const quinnId = (await json(await quinn.request('/api/portal/profile'), 200)).user_id;
    const answer = await json(await app.request('/api/chat', { method: 'POST', json: { user_id: patId, message: 'How many llamas were counted?' } }), 200);
    expect(answer.reply).toMatch(/^According to census\.pdf: .*forty two \*\*llamas\*\*/);
    expect(answer.tool_calls).toMatchObject([{ tool_name: 'search_documents', ok: true }]);
    const other = await json(await app.request('/api/chat', { method: 'POST', json: { user_id: quinnId, message: 'How many llamas were counted?' } }), 200);
    expect(other.reply).toBe('I found nothing in your documents.');

    // With a model configured, the history summary of a closed session is the model's sentence.
    await json(await app.request(`/api/sessions/${answer.session_id}/close`, { method: 'POST', json: {} }), 200);
    const row = await eventually(async () => {
      const { sessions } = await json(await pat.request('/api/portal/history'), 200);
      return sessions.find((s: { session_id: string; summary: string }) => s.session_id === answer.session_id && s.summary === 'Asked how many llamas the census counted.');
    }, 10_000, 'the model summary');
    expect(row).toMatchObject({ channel: 'chat', message_count: 2 });
    const asked = llm.requests.find((r) => r.body.messages[0]?.content === summaryPrompt)!;
    expect(asked.body.messages[1]!.content).toContain('user (chat): How many llamas were counted?');
  });
});
