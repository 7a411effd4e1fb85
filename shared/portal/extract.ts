/**
 * Text of an uploaded document by kind: PDF (unpdf), DOCX (mammoth), HTML (tags stripped), and plain
 * text, Markdown and CSV as they are. A file that cannot be read is an ExtractionError whose message
 * is the failure reason the person sees. The parsers run in a process of their own per document
 * (extractChunks), bounded in time, heap and address space, with none of the platform's environment.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { constants, setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** Openers of what a page does not show: a comment, or an element whose content is not text. */
const hiddenOpener = /<!--|<(script|style|noscript|template)\b/gi;

/**
 * Visible text of an HTML page: scripts, styles and comments dropped, block ends kept as line breaks.
 * One pass, linear in the page: each search starts where the last ended, and an element or comment
 * left open runs to the end of the page (as browsers read it), so nothing is scanned twice.
 */
export function htmlToText(html: string): string {
  const visible: string[] = [];
  let from = 0;
  hiddenOpener.lastIndex = 0;
  for (let m = hiddenOpener.exec(html); m; m = hiddenOpener.exec(html)) {
    visible.push(html.slice(from, m.index), ' ');
    let end = html.length;
    if (m[1] === undefined) {
      const close = html.indexOf('-->', m.index + 4);
      if (close >= 0) end = close + 3;
    } else {
      const closer = new RegExp(`</${m[1]}\\s*>`, 'gi');
      closer.lastIndex = hiddenOpener.lastIndex;
      if (closer.exec(html)) end = closer.lastIndex;
    }
    from = hiddenOpener.lastIndex = end;
  }
  visible.push(html.slice(from));
  return visible
    .join('')
    .replace(/<\/(p|div|li|h[1-6]|tr|br|section|article)\s*>|<br\s*\/?>/gi, '\n')
    // A tag ends at the next '>' and never spans a '<': an unclosed '<' costs one short scan, not one to the end.
    .replace(/<[^<>]+>/g, ' ')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{1,32});/gi, (m, e: string) => {
      if (e[0] !== '#') return entities[e.toLowerCase()] ?? m;
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : m;
    });
}

/** Text PostgreSQL can store: NUL dropped, a lone surrogate (an unpaired half of a character) replaced. */
export const storableText = (text: string) => text.replace(/\u0000/g, '').replace(/[\ud800-\udfff]/gu, '\ufffd');

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

/** What the extraction process (./extract.child.ts) is sent and answers. */
export interface ChildInput {
  content: Uint8Array;
  contentType: string;
  filename: string;
}
export type ChildOutput = { chunks: string[] } | { unreadable: string } | { error: string };

export interface ExtractionLimits {
  /** Wall time of the whole extraction, the process's start included. */
  timeoutMs: number;
  /** Heap of the extracting process (V8's old generation), in MB. */
  maxMemoryMb: number;
  /** The process's whole address space (RLIMIT_AS), in MB: buffers outside the heap included; 0 for none. */
  maxAddressSpaceMb?: number;
}

const childEntry = fileURLToPath(new URL(`./extract.child${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
let sourceBuild: Promise<string> | undefined;
/**
 * The script the child runs. Compiled, its .js entry. From source (tsx, vitest), the .ts entry bundled
 * once by esbuild (the transformer tsx runs on) into a plain module under node_modules/.cache, its
 * packages left to node_modules: a child started through tsx's loader carried a second V8 isolate and,
 * for a file not yet in tsx's cache, a transform service, which failed under the address-space cap
 * meant for the parser. So development and tests run the child as production does, and under the same cap.
 */
function childScript(): Promise<string> {
  if (!childEntry.endsWith('.ts')) return Promise.resolve(childEntry);
  sourceBuild ??= (async () => {
    const { build } = await import('esbuild');
    const out = await build({ entryPoints: [childEntry], bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, logLevel: 'silent' });
    const dir = path.resolve(path.dirname(childEntry), '../../node_modules/.cache/switchboard');
    await mkdir(dir, { recursive: true });
    const script = path.join(dir, 'extract.child.mjs');
    // Written aside, then renamed: test files building it at once never start a half-written one.
    const staged = `${script}.${process.pid}`;
    await writeFile(staged, out.outputFiles[0]!.contents);
    await rename(staged, script);
    return script;
  })();
  sourceBuild.catch(() => (sourceBuild = undefined));
  return sourceBuild;
}
/** What V8, Node or the C library say when an allocation fails at the address-space limit. */
const outOfAddressSpace = /out of memory|Allocation failed|Array buffer allocation failed|std::bad_alloc|Cannot allocate memory/i;
const addressSpaceError = (limits: ExtractionLimits) =>
  new ExtractionError(`Reading the file needed more memory than the limit of ${limits.maxAddressSpaceMb} MB of address space (DOCUMENT_EXTRACT_MAX_ADDRESS_SPACE_MB); it was stopped.`);
/** The last bytes of a child's stderr kept, enough for V8's out-of-memory line. */
const stderrTail = 4096;

/**
 * Why a child process and not a worker thread: a parsing thread takes CPU at the priority of the event
 * loop that delivers session messages (nothing lowers a thread's priority portably), and V8 may abort
 * the whole process when a thread passes its heap limit. A child runs at the lowest priority, so the
 * OS runs delivery, the API, Postgres and Redis first; its heap limit is --max-old-space-size on its
 * own command line, and passing it, or the time limit (SIGKILL), ends only the child.
 */
function startChild(script: string, limits: ExtractionLimits): ChildProcess {
  const nodeArgs = [`--max-old-space-size=${limits.maxMemoryMb}`];
  const child = fork(script, [], {
    // The heap limit bounds only V8's objects: a parser's ArrayBuffers (an inflated stream) live outside
    // it. The shell lowers the address-space limit (RLIMIT_AS, which any user may lower, in a container
    // too, where a cgroup of its own needs privileges) and execs Node in its place, keeping the IPC channel.
    ...(limits.maxAddressSpaceMb
      ? { execPath: '/bin/sh', execArgv: ['-c', 'ulimit -v "$0" && exec "$@"', String(limits.maxAddressSpaceMb * 1024), process.execPath, ...nodeArgs] }
      : { execArgv: nodeArgs }),
    // Nothing of the parent's environment (database and Redis URLs, API keys, tokens): a parser that can
    // be made to run code finds no secret. The parsers need none; fewer malloc arenas keep Node's own reservation small.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MALLOC_ARENA_MAX: '2' },
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  try {
    if (child.pid !== undefined) setPriority(child.pid, constants.priority.PRIORITY_LOW);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return child;
}

/**
 * The chunks of a document's text, extracted in a process of its own within `limits`: a file that
 * cannot be read, takes longer than the time limit or needs more heap than the memory limit is an
 * ExtractionError naming why (the process is killed, the caller carries on). Any other failure of
 * the process is a plain Error (the job retries).
 */
export async function extractChunks(content: Buffer, contentType: string, filename: string, limits: ExtractionLimits): Promise<string[]> {
  const script = await childScript();
  return new Promise((resolve, reject) => {
    const child = startChild(script, limits);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-stderrTail);
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => settle(() => reject(new ExtractionError(`Reading the file took longer than the limit of ${limits.timeoutMs} ms (DOCUMENT_EXTRACT_TIMEOUT_MS); it was stopped.`))),
      limits.timeoutMs,
    );
    child.on('message', (output: ChildOutput) =>
      settle(() => {
        if ('chunks' in output) resolve(output.chunks);
        else if ('unreadable' in output) reject(new ExtractionError(output.unreadable));
        // A parser that caught its own failed allocation answers with it: the file is over the limit, not the platform failing.
        else if (limits.maxAddressSpaceMb && outOfAddressSpace.test(output.error)) reject(addressSpaceError(limits));
        else reject(new Error(`document extraction failed: ${output.error}`));
      }),
    );
    child.on('error', (err) => settle(() => reject(new Error(`document extraction process failed: ${err.message}`))));
    // 'close', not 'exit': by then the whole of stderr (V8's out-of-memory line) has been read.
    child.on('close', (code, signal) =>
      settle(() =>
        reject(
          /JavaScript heap out of memory/.test(stderr)
            ? new ExtractionError(`Reading the file needed more memory than the limit of ${limits.maxMemoryMb} MB (DOCUMENT_EXTRACT_MAX_MEMORY_MB); it was stopped.`)
            : limits.maxAddressSpaceMb && outOfAddressSpace.test(stderr)
            ? addressSpaceError(limits)
            : new Error(`document extraction process exited (${signal ?? `code ${code}`}) without an answer: ${stderr.trim().split('\n').at(-1) ?? ''}`),
        ),
      ),
    );
    const input: ChildInput = { content: new Uint8Array(content.buffer, content.byteOffset, content.byteLength), contentType, filename };
    child.send(input, (err) => {
      if (err) settle(() => reject(new Error(`document extraction process did not take the file: ${err.message}`)));
    });
  });
}
