/**
 * Documents made by the tests themselves: a minimal one-page PDF with a text object (written by
 * hand, with a correct cross-reference table) and a DOCX zipped with fflate.
 */
import { Zip, ZipDeflate, strToU8, zipSync } from 'fflate';

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
