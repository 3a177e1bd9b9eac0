// Console forms that carry files (the compose page, the script's uploads) are multipart/form-data. The CSRF check runs
// before any handler reads the body, so these forms send their token in the query string (`?_csrf=`), which
// `csrfFromQuery` hands to the check; the handler then streams the body: each file goes straight to the media library
// (the uploadMedia tool, as POST /upload), nothing is buffered whole in memory.
import type { NextFunction, Request, Response } from 'express';
import busboy from 'busboy';
import { invalidInput } from '../../errors.js';
import type { IncomingMedia } from '../../../tools/internal/media.js';

/** Console paths that take multipart/form-data. */
export const MULTIPART_PATHS = new Set(['/compose', '/media/upload', '/media', '/posts/import']);

export const isConsoleMultipart = (request: Request) => request.method === 'POST' && MULTIPART_PATHS.has(request.path) && Boolean(request.is('multipart/form-data'));

/** Before the session's CSRF check: a multipart form's token comes from the query string (its body is read later). */
export function csrfFromQuery(request: Request, _response: Response, next: NextFunction): void {
  if (isConsoleMultipart(request)) request.body = { _csrf: typeof request.query._csrf === 'string' ? request.query._csrf : '' };
  next();
}

export type FormFields = Record<string, string[]>;

/**
 * Reads a multipart body: text fields (repeated names kept in order), and each non-empty file handed to `onFile` in turn
 * (the next part waits until it is read) with the fields read before it. A file that `onFile` refuses is reported in `problems`, not thrown, so the
 * form can be shown again with what was typed.
 */
export function readMultipart(
  request: Request,
  onFile: (field: string, file: IncomingMedia, fieldsSoFar: FormFields) => Promise<void>,
): Promise<{ fields: FormFields; problems: string[] }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { files: 20, fields: 2000, fieldSize: 100 * 1024, parts: 2100 } });
    } catch {
      reject(invalidInput('The form could not be read: its multipart boundary is missing.', { hint: 'Send the form again from the page.' }));
      return;
    }
    const fields: FormFields = {};
    const problems: string[] = [];
    let work = Promise.resolve();
    parser.on('field', (name, value) => {
      (fields[name] ??= []).push(value);
    });
    parser.on('file', (name, stream, info) => {
      if (!info.filename) {
        stream.resume();
        return;
      }
      work = work.then(() =>
        onFile(name, { stream, filename: info.filename }, fields).catch((error: Error) => {
          stream.resume();
          problems.push(`${info.filename}: ${error.message}`);
        }),
      );
    });
    parser.on('filesLimit', () => problems.push('Only 20 files can be uploaded at once; the others were left out.'));
    parser.on('error', (error: Error) => reject(invalidInput(`The form could not be read: ${error.message}.`, { hint: 'Send the form again from the page.' })));
    parser.on('close', () => {
      work.then(() => resolve({ fields, problems }), reject);
    });
    request.pipe(parser);
  });
}
