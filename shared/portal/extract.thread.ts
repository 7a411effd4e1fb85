/**
 * The thread that extracts one document (extractChunks in ./extract.ts starts one per document): the
 * parsers run here, so a document that is slow or needs too much memory is stopped by this thread's
 * time and heap limits, away from the worker's main thread that delivers session messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ExtractionError, chunkText, extractText, storableText, type ThreadInput, type ThreadOutput } from './extract.js';

const { content, contentType, filename } = workerData as ThreadInput;
let output: ThreadOutput;
try {
  output = { chunks: chunkText(storableText(await extractText(Buffer.from(content), contentType, filename))) };
} catch (err) {
  output = err instanceof ExtractionError ? { unreadable: err.message } : { error: (err as Error).message };
}
parentPort!.postMessage(output);
