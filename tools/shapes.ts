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

export const createdPostSchema = z.object({ postId: z.string(), integration: z.string() });

/** `{output: X}`: MCP structured content must be an object, and the spec's REST bodies use the same wrapper. */
export const wrapped = <T extends z.ZodType>(schema: T) => z.object({ output: schema });

export const idParam = z.string().trim().min(1, 'is required').max(200);
