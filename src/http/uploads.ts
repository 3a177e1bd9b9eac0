// Local media at /uploads/YYYY/MM/DD/<random>.<ext>: the stored type, never sniffed, sandboxed, cached for a year, with ranges.
import path from 'node:path';
import express, { type Response } from 'express';
import type { Config } from '../config.js';
import { ACCEPTED_TYPES } from '../lib/media-probe.js';
import { uploadsRoot } from '../lib/storage/local.js';

const typeByExtension = new Map(Object.entries(ACCEPTED_TYPES).map(([type, extension]) => [`.${extension}`, type]));

export function uploadsHandler(config: Config): express.Handler {
  return express.static(uploadsRoot(config), {
    index: false,
    redirect: false,
    dotfiles: 'ignore',
    maxAge: '365d',
    immutable: true,
    acceptRanges: true,
    setHeaders(response: Response, file: string) {
      // The extension was chosen from the detected type at upload, so it names the real type.
      response.setHeader('Content-Type', typeByExtension.get(path.extname(file).toLowerCase()) ?? 'application/octet-stream');
      response.setHeader('X-Content-Type-Options', 'nosniff');
      response.setHeader('Content-Security-Policy', 'sandbox');
      response.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    },
  });
}
