/**
 * The process that extracts one document (extractChunks in ./extract.ts starts one per document, at
 * the lowest CPU priority, with its heap limit on its command line): it reads one request from its
 * parent, answers once and exits.
 */
import { ExtractionError, chunkText, extractText, storableText, type ChildInput, type ChildOutput } from './extract.js';

process.once('message', async ({ content, contentType, filename }: ChildInput) => {
  let output: ChildOutput;
  try {
    output = { chunks: chunkText(storableText(await extractText(Buffer.from(content.buffer, content.byteOffset, content.byteLength), contentType, filename))) };
  } catch (err) {
    output = err instanceof ExtractionError ? { unreadable: err.message } : { error: (err as Error).message };
  }
  process.send!(output, () => process.disconnect());
});
