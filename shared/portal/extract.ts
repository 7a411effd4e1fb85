/**
 * Text of an uploaded document by kind: PDF (unpdf), DOCX (mammoth), HTML (tags stripped), and plain
 * text, Markdown and CSV as they are. A file that cannot be read is an ExtractionError whose message
 * is the failure reason the person sees.
 */
import path from 'node:path';

export class ExtractionError extends Error {}

export type DocumentKind = 'pdf' | 'docx' | 'html' | 'text';

const byExtension: Record<string, DocumentKind> = {
  '.pdf': 'pdf', '.docx': 'docx', '.html': 'html', '.htm': 'html', '.txt': 'text', '.md': 'text', '.markdown': 'text', '.csv': 'text',
};
const byType: Record<string, DocumentKind> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/html': 'html',
  'text/plain': 'text',
  'text/markdown': 'text',
  'text/csv': 'text',
};

/** The kind of a file from its content type, else its extension; undefined when unsupported. */
export function documentKind(contentType: string, filename: string): DocumentKind | undefined {
  return byType[contentType.split(';')[0]!.trim().toLowerCase()] ?? byExtension[path.extname(filename).toLowerCase()];
}

export const supportedKinds = 'PDF, DOCX, HTML, plain text, Markdown and CSV';

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Visible text of an HTML page: scripts, styles and comments dropped, block ends kept as line breaks. */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<\/(p|div|li|h[1-6]|tr|br|section|article)\s*>|<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
      return entities[e.toLowerCase()] ?? m;
    });
}

export async function extractText(content: Buffer, contentType: string, filename: string): Promise<string> {
  const kind = documentKind(contentType, filename);
  if (!kind) throw new ExtractionError(`Unsupported file type ${contentType} (${filename}); supported: ${supportedKinds}.`);
  try {
    switch (kind) {
      // The parsers are loaded on first use: an API process that never extracts a document does not hold them (mammoth ~3 MB of heap).
      case 'pdf': {
        const { extractText: pdfText, getDocumentProxy } = await import('unpdf');
        const pdf = await getDocumentProxy(new Uint8Array(content));
        return (await pdfText(pdf, { mergePages: true })).text;
      }
      case 'docx': {
        const { default: mammoth } = await import('mammoth');
        return (await mammoth.extractRawText({ buffer: content })).value;
      }
      case 'html':
        return htmlToText(content.toString('utf8'));
      case 'text':
        return content.toString('utf8');
    }
  } catch (err) {
    throw new ExtractionError(`The ${kind.toUpperCase()} file could not be read: ${(err as Error).message}`);
  }
}

/** Chunks of about `size` characters, cut at paragraph, then sentence, then word boundaries. */
export function chunkText(text: string, size = 1500): string[] {
  const clean = text.replace(/\r\n?/g, '\n').replace(/[ \t\f\v]+/g, ' ').replace(/\n{3,}/g, '\n\n').trim();
  const chunks: string[] = [];
  let rest = clean;
  while (rest.length > size) {
    const window = rest.slice(0, size);
    const cut = [window.lastIndexOf('\n\n'), window.lastIndexOf('. '), window.lastIndexOf(' ')].find((i) => i > size / 2) ?? size;
    chunks.push(rest.slice(0, cut + 1).trim());
    rest = rest.slice(cut + 1).trimStart();
  }
  if (rest.trim()) chunks.push(rest.trim());
  return chunks;
}
