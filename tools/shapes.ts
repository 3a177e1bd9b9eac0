// Zod shapes shared by several tools' outputs.
import { z } from 'zod';

export const integrationRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  identifier: z.string(),
  platform: z.string(),
  picture: z.string(),
  disabled: z.boolean(),
  profile: z.string(),
  customer: z.object({ id: z.string(), name: z.string() }).optional(),
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
