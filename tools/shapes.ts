// Zod shapes shared by several tools' inputs and outputs.
import { z } from 'zod';
import { newId } from '../src/lib/crypto.js';

export const integrationRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  identifier: z.string(),
  platform: z.string(),
  picture: z.string(),
  disabled: z.boolean(),
  profile: z.string(),
  customer: z.object({ id: z.string(), name: z.string() }).optional(),
  timeZone: z
    .string()
    .optional()
    .describe('IANA time zone of the channel (its own, else the organization\'s default): where "Tuesday 9:00 in the client\'s time" is read. Dates in the API stay UTC.'),
});

export const analyticsMetricSchema = z.object({
  label: z.string(),
  data: z.array(z.object({ total: z.string(), date: z.string() })),
  percentageChange: z.number(),
});

export const createdPostSchema = z.object({
  postId: z.string(),
  integration: z.string(),
  /** Present when the post was created but something may still make it fail (e.g. media the platform cannot reach). */
  warnings: z.array(z.string()).optional(),
  /** Present when the post waits for an owner's approval (the approval gate for agents). */
  approval: z.object({ status: z.literal('pending'), message: z.string() }).optional(),
});

/** `{output: X}`: MCP structured content must be an object, and the spec's REST bodies use the same wrapper. */
export const wrapped = <T extends z.ZodType>(schema: T) => z.object({ output: schema });

export const idParam = z.string().trim().min(1, 'is required').max(200);

/** What a destructive tool answers: deleted, or (over MCP, before the user confirmed) what would be deleted. */
export const deletionOutput = z.object({
  id: z.string(),
  deleted: z.boolean().optional(),
  wouldDelete: z.record(z.string(), z.unknown()).optional(),
  message: z.string().optional(),
});

/** The second call of a destructive tool over MCP, after the user agreed. */
export const confirmInput = z.boolean().optional().describe('true once the user agreed to what the first call answered');

/** A file of the media library (GET /media items; uploads answer it plus `warnings`). */
export const mediaRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string().describe('Absolute public URL: use it (with the id) in posts'),
  type: z.string().describe('MIME type detected from the bytes'),
  size: z.number().describe('Bytes'),
  width: z.number().optional(),
  height: z.number().optional(),
  duration: z.number().optional().describe('Seconds (videos)'),
  createdAt: z.string(),
});

export const uploadedMediaSchema = mediaRecordSchema.extend({
  warnings: z.array(z.string()).describe('Things that may make platforms refuse or degrade the file; the upload itself succeeded'),
});

/** A date-time of a post (creation, scheduling, edits): ISO 8601 with Z or an offset. */
export const utcDateTime = z.iso.datetime({ offset: true, message: 'must be a UTC ISO 8601 date-time such as 2026-12-01T09:00:00Z' });

/** A media item of a post in the REST bodies (POST /posts, PUT /posts/{id}): a library file's id and path, or a URL. */
export const imageSchema = z.object({ id: z.string().min(1), path: z.string().min(1), alt: z.string().optional(), thumbnail: z.string().optional() });

const HTTP_URL = /^https?:\/\//i;

/**
 * A media item as agents send it: the {id, path} an upload or generateImageTool answered, the media id alone, or a URL
 * (the form of the spec's `attachments`). A bare id or library path is kept as sent, so an error names what the agent sent.
 */
export const mediaReference = z
  .union([z.string().trim().min(1, 'must be a media id or an http(s) URL'), imageSchema])
  .transform((media) => (typeof media !== 'string' ? media : { id: HTTP_URL.test(media) ? newId() : media, path: media }))
  .describe('{id, path} of an upload, a media id, or an https URL');

/** The input fields of a paged listing: pages start at 0. */
export const pageInput = {
  page: z.coerce.number().int().min(0).default(0),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
};

/** The output fields of a paged listing, after its items. */
export const pageOutput = { total: z.number(), page: z.number(), pageSize: z.number(), hasMore: z.boolean() };

/** What a paged listing answers after its items: the total, the page asked for, and whether another page follows. */
export const paged = (total: number, page: number, pageSize: number) => ({ total, page, pageSize, hasMore: (page + 1) * pageSize < total });
