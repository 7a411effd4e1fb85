/**
 * multipart/form-data bodies (uploads): one file part and text fields, read as they stream. Past the
 * route's byte limit the reading stops with 413, so an oversized file is never held whole.
 */
import type { Context } from 'koa';
import busboy from 'busboy';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../shared/errors.js';

/** The file part of a multipart body. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** A multipart body as read: the file and every text field (a repeated field keeps each value). */
export interface MultipartBody {
  file: UploadedFile;
  fields: Record<string, string | string[]>;
}

export interface MultipartLimits {
  /** Name of the file part. */
  file: string;
  /** Largest file accepted, read when a request arrives (a setting). */
  maxBytes: () => number;
  /** The 413's detail, e.g. "The document is larger than 20971520 bytes (DOCUMENT_MAX_BYTES)." */
  tooLarge: (maxBytes: number) => string;
}

/** Reads the request's multipart body: 415 when it is not one, 400 without the file part, 413 past the limit. */
export function readMultipart(ctx: Context, limits: MultipartLimits): Promise<MultipartBody> {
  const max = limits.maxBytes();
  const req = ctx.req;
  if (!ctx.get('Content-Type').toLowerCase().startsWith('multipart/form-data')) {
    return Promise.reject(new UnsupportedMediaTypeError(`Send multipart/form-data with a \`${limits.file}\` part.`));
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: max, fields: 20, fieldSize: 10_000 } });
    } catch (err) {
      reject(new ValidationError(`The multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    const fields: Record<string, string | string[]> = {};
    let file: UploadedFile | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      // Drain the rest so the connection can carry the error response.
      req.resume();
      reject(err);
    };
    parser.on('field', (name, value) => {
      const seen = fields[name];
      fields[name] = seen === undefined ? value : [seen, value].flat();
    });
    parser.on('file', (name, stream, info) => {
      if (name !== limits.file) {
        stream.resume();
        return;
      }
      const parts: Buffer[] = [];
      stream.on('data', (d: Buffer) => parts.push(d));
      stream.on('limit', () => fail(new PayloadTooLargeError(limits.tooLarge(max))));
      stream.on('end', () => {
        if (!failed) file = { filename: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', content: Buffer.concat(parts) };
      });
    });
    parser.on('error', (err: Error) => fail(new ValidationError(`The multipart body cannot be read: ${err.message}`)));
    parser.on('close', () => {
      if (failed) return;
      if (!file) fail(new ValidationError(`A \`${limits.file}\` part is required.`, [{ path: `body.${limits.file}`, message: 'is required' }]));
      else resolve({ file, fields });
    });
    req.pipe(parser);
  });
}
