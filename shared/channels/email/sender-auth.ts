/**
 * Whether the MX in front vouches for a message's `From:` (RFC 8601 Authentication-Results). No
 * maintained npm parser of the header exists (mailauth writes it, it does not read it), so this is a
 * small one over the RFC's grammar: comments are dropped, quoted strings kept whole, and a header that
 * does not parse counts as no result. Only the top-most header whose authserv-id is the configured one
 * counts: the MX prepends its own, so anything below it (or from another id) may be the sender's.
 */

export interface AuthResult {
  /** The method (`dmarc`, `dkim`, `spf`…), lower case, without its version. */
  method: string;
  /** Its result (`pass`, `fail`, `none`…), lower case. */
  result: string;
  /** Properties by `ptype.property` in lower case (`header.d`, `header.from`, `smtp.mailfrom`). */
  props: Record<string, string>;
}

export interface AuthenticationResults {
  authservId: string;
  results: AuthResult[];
}

type Token = { kind: 'word' | 'quoted'; text: string } | { kind: 'special'; text: ';' | '=' | '/' };

/** The header's tokens with comments (nested, with quoted-pairs) and whitespace dropped; undefined when a comment or quote is left open. */
function tokenize(value: string): Token[] | undefined {
  const tokens: Token[] = [];
  let i = 0;
  while (i < value.length) {
    const c = value[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(') {
      let depth = 0;
      for (; i < value.length; i++) {
        if (value[i] === '\\') i++;
        else if (value[i] === '(') depth++;
        else if (value[i] === ')' && --depth === 0) break;
      }
      if (depth !== 0) return undefined;
      i++;
    } else if (c === '"') {
      let text = '';
      for (i++; i < value.length && value[i] !== '"'; i++) text += value[i] === '\\' ? value[++i] ?? '' : value[i];
      if (i >= value.length) return undefined;
      tokens.push({ kind: 'quoted', text });
      i++;
    } else if (c === ';' || c === '=' || c === '/') {
      tokens.push({ kind: 'special', text: c });
      i++;
    } else if (c === ')') {
      return undefined;
    } else {
      const start = i;
      while (i < value.length && !/[\s()";=/]/.test(value[i]!)) i++;
      tokens.push({ kind: 'word', text: value.slice(start, i) });
    }
  }
  return tokens;
}

/** Parses one Authentication-Results value (without the field name); undefined when it does not follow RFC 8601. */
export function parseAuthenticationResults(value: string): AuthenticationResults | undefined {
  const tokens = tokenize(value);
  if (!tokens?.length) return undefined;
  // Statements split at ';' (quoted strings and comments already taken out of the way).
  const statements: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'special' && t.text === ';') statements.push([]);
    else statements.at(-1)!.push(t);
  }
  const [head, ...rest] = statements as [Token[], ...Token[][]];
  const id = head[0];
  // authserv-id [version]
  if (!id || id.kind === 'special' || head.length > 2 || (head[1] && !/^\d+$/.test(head[1].text))) return undefined;
  const results: AuthResult[] = [];
  if (rest.length === 1 && rest[0]!.length === 1 && rest[0]![0]!.text.toLowerCase() === 'none') return { authservId: id.text, results };
  for (const s of rest) {
    // method [/ version] = result, then reason=value and ptype.property=value pairs.
    let k = 0;
    const method = s[k++];
    if (method?.kind !== 'word') return undefined;
    if (s[k]?.text === '/') k += 2;
    if (s[k++]?.text !== '=' || s[k]?.kind !== 'word') return undefined;
    const result: AuthResult = { method: method.text.toLowerCase(), result: s[k++]!.text.toLowerCase(), props: {} };
    while (k < s.length) {
      const name = s[k];
      const value = s[k + 2];
      if (name?.kind !== 'word' || s[k + 1]?.text !== '=' || !value || value.kind === 'special') return undefined;
      let text = value.text;
      k += 3;
      // A quoted local-part: "john smith"@example.com
      if (value.kind === 'quoted' && s[k]?.kind === 'word' && s[k]!.text.startsWith('@')) text += s[k++]!.text;
      if (name.text.toLowerCase() !== 'reason') result.props[name.text.toLowerCase()] = text;
    }
    results.push(result);
  }
  return { authservId: id.text, results };
}

/** The domain of an address or of an `@domain` identity, lower case, without a trailing dot. */
const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '');

/**
 * Relaxed alignment kept simple, without a public-suffix list: the signing domain is the From: domain,
 * a parent of it (of two labels or more) or a subdomain of it. Sibling subdomains of one organisation
 * do not align here (DMARC would say they do; the MX's dmarc=pass covers them); in exchange, two
 * strangers under one public suffix (a.github.io, b.github.io) can never align.
 */
export function aligned(signingDomain: string, fromDomain: string): boolean {
  const [a, b] = [signingDomain.toLowerCase().replace(/\.$/, ''), fromDomain.toLowerCase().replace(/\.$/, '')];
  if (!a || !b) return false;
  if (a === b) return true;
  const [parent, child] = a.length < b.length ? [a, b] : [b, a];
  return parent.includes('.') && child.endsWith(`.${parent}`);
}

export type SenderVerdict = { ok: true; by: 'dmarc' | 'dkim'; authservId: string } | { ok: false; reason: string };

/**
 * The verdict of the top-most Authentication-Results whose authserv-id is `authservId` (compared whole,
 * case ignored as domain names are) on `from`: dmarc=pass (for From:'s domain when it names one), or
 * dkim=pass by a domain aligned with From:. SPF alone never counts: it vouches for the envelope sender,
 * which may be anyone's.
 */
export function senderVerdict(headers: string[], authservId: string, from: string | undefined): SenderVerdict {
  if (!from) return { ok: false, reason: 'the message has no From: address' };
  const fromDomain = domainOf(from);
  const wanted = authservId.toLowerCase();
  // A header of ours that does not parse still takes the top place: a forged one below must not stand in for it.
  const startsWithId = (value: string) => {
    const v = value.trimStart().toLowerCase();
    return v.startsWith(wanted) && /^[\s;(]/.test(v.slice(wanted.length));
  };
  const top = headers
    .map((value) => ({ value, parsed: parseAuthenticationResults(value) }))
    .find(({ value, parsed }) => (parsed ? parsed.authservId.toLowerCase() === wanted : startsWithId(value)));
  if (!top) return { ok: false, reason: `no Authentication-Results from ${authservId}` };
  const ours = top.parsed;
  if (!ours) return { ok: false, reason: `the Authentication-Results from ${authservId} does not parse (RFC 8601)` };
  const summary = ours.results.map((r) => `${r.method}=${r.result}`).join(' ') || 'none';
  const pass = (method: string) => ours.results.filter((r) => r.method === method && r.result === 'pass');
  if (pass('dmarc').some((r) => !r.props['header.from'] || domainOf(r.props['header.from']) === fromDomain)) return { ok: true, by: 'dmarc', authservId: ours.authservId };
  const dkimDomain = (r: AuthResult) => r.props['header.d'] ?? (r.props['header.i'] ? domainOf(r.props['header.i']) : '');
  if (pass('dkim').some((r) => aligned(dkimDomain(r), fromDomain))) return { ok: true, by: 'dkim', authservId: ours.authservId };
  return { ok: false, reason: `${authservId} shows no dmarc=pass and no dkim=pass aligned with ${fromDomain} (${summary})` };
}
