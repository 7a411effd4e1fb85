/**
 * Documents made by the tests themselves: a minimal one-page PDF with a text object (written by
 * hand, with a correct cross-reference table) and a DOCX zipped with fflate.
 */
import { Zip, ZipDeflate, strToU8, zipSync } from 'fflate';
import { once } from 'node:events';
import zlib from 'node:zlib';

/** A valid one-page PDF showing `text` (ASCII; parentheses and backslashes escaped). */
export function makePdf(text: string): Buffer {
  const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = `BT /F1 12 Tf 72 720 Td (${escaped}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const contentTypesXml =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const relsXml =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

/** A minimal DOCX (one paragraph per entry of `paragraphs`). */
export function makeDocx(paragraphs: string[]): Buffer {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${esc(p)}</w:t></w:r></w:p>`).join('');
  const files = {
    '[Content_Types].xml': strToU8(contentTypesXml),
    '_rels/.rels': strToU8(relsXml),
    'word/document.xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
    ),
  };
  return Buffer.from(zipSync(files));
}

/** Uploads a document as `who` (multipart, as the documents screen does); extra form fields such as category. */
export function uploadDocument(who: { request: (path: string, init?: RequestInit) => Promise<Response> }, filename: string, content: Buffer, type: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([new Uint8Array(content)], { type }), filename);
  return who.request('/api/portal/documents', { method: 'POST', body: form });
}

/**
 * A DOCX whose document.xml inflates to about `megabytes` MB of paragraphs from a small file (the
 * deflate ratio is ~1000:1): the shape of upload whose parse takes tens of seconds and gigabytes.
 */
export function makeDocxBomb(megabytes: number): Buffer {
  const parts: Uint8Array[] = [];
  const zip = new Zip((err, data) => {
    if (err) throw err;
    parts.push(data);
  });
  const add = (name: string, text: string) => {
    const file = new ZipDeflate(name, { level: 9 });
    zip.add(file);
    file.push(strToU8(text), true);
  };
  add('[Content_Types].xml', contentTypesXml);
  add('_rels/.rels', relsXml);
  const doc = new ZipDeflate('word/document.xml', { level: 9 });
  zip.add(doc);
  doc.push(strToU8('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'));
  const block = strToU8('<w:p><w:r><w:t>a</w:t></w:r></w:p>'.repeat(30_000)); // ~1 MB
  for (let i = 0; i < megabytes; i++) doc.push(block);
  doc.push(strToU8('</w:body></w:document>'), true);
  zip.end();
  return Buffer.concat(parts);
}

/** HTML on which a backtracking tag stripper is quadratic: openers that never close, `repeat` of each. */
export const quadraticHtml = (repeat: number) => ['<!--', '<script', '<style', '<a ', '<'].map((opener) => opener.repeat(repeat)).join('<p>text</p>');

/** The pieces deflated as they stream (zlib format, or raw for a ZIP entry), with the CRC-32 and size of what they inflate to. */
async function deflatePieces(pieces: Iterable<Buffer>, raw: boolean, options: zlib.ZlibOptions = {}): Promise<{ data: Buffer; crc: number; size: number }> {
  const deflate = raw ? zlib.createDeflateRaw(options) : zlib.createDeflate(options);
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = once(deflate, 'end');
  let crc = 0;
  let size = 0;
  for (const piece of pieces) {
    crc = zlib.crc32(piece, crc);
    size += piece.length;
    if (!deflate.write(piece)) await once(deflate, 'drain');
  }
  deflate.end();
  await ended;
  return { data: Buffer.concat(out), crc, size };
}

function* repeated(block: Buffer, times: number): Generator<Buffer> {
  for (let i = 0; i < times; i++) yield block;
}

/**
 * A 1 MB-class PDF whose one content stream (FlateDecode) inflates to `megabytes` MB of NUL bytes
 * (whitespace to a PDF reader, ~1000:1): the reader's buffer grows to hold it, outside the JS heap.
 */
export async function makePdfBomb(megabytes: number): Promise<Buffer> {
  // Run-length matching only: the same ratio on NUL bytes, ten times faster to build.
  const { data } = await deflatePieces(repeated(Buffer.alloc(1024 * 1024), megabytes), false, { strategy: zlib.constants.Z_RLE });
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const add = (...chunks: Buffer[]) => {
    for (const c of chunks) {
      parts.push(c);
      length += c.length;
    }
  };
  const object = (n: number, ...chunks: Buffer[]) => {
    offsets.push(length);
    add(Buffer.from(`${n} 0 obj\n`, 'latin1'), ...chunks, Buffer.from('\nendobj\n', 'latin1'));
  };
  add(Buffer.from('%PDF-1.4\n', 'latin1'));
  object(1, Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'));
  object(2, Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'));
  object(3, Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>'));
  object(4, Buffer.from(`<< /Length ${data.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1'));
  object(5, Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'));
  const xref = length;
  let trailer = `xref\n0 ${offsets.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) trailer += `${String(o).padStart(10, '0')} 00000 n \n`;
  add(Buffer.from(`${trailer}trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A ZIP of deflated entries (method 8), written by hand: local headers, data, central directory. */
function zipOf(entries: Array<{ name: string; data: Buffer; crc: number; size: number }>): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(e.crc >>> 0, 16);
    dir.writeUInt32LE(e.data.length, 20);
    dir.writeUInt32LE(e.size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(local, name, e.data);
    central.push(dir, name);
    offset += local.length + name.length + e.data.length;
  }
  const dirLength = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirLength, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...central, end]);
}

/**
 * A 1 MB-class DOCX whose document.xml inflates to about `megabytes` MB of paragraphs (~330:1),
 * deflated as it streams (makeDocxBomb's fflate takes a minute for this size).
 */
export async function makeLargeDocxBomb(megabytes: number): Promise<Buffer> {
  const head = Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>');
  const paragraphs = Buffer.from('<w:p><w:r><w:t>a</w:t></w:r></w:p>'.repeat(30_000)); // ~1 MB
  const tail = Buffer.from('</w:body></w:document>');
  return zipOf([
    { name: '[Content_Types].xml', ...(await deflatePieces([Buffer.from(contentTypesXml)], true)) },
    { name: '_rels/.rels', ...(await deflatePieces([Buffer.from(relsXml)], true)) },
    { name: 'word/document.xml', ...(await deflatePieces([head, ...repeated(paragraphs, megabytes), tail], true)) },
  ]);
}
