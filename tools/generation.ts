// The four AI generation tools of the spec. Generators are a later issue: until then each answers not_supported, never a fake result.
import { z } from 'zod';
import { notSupported } from '../src/errors.js';
import { defineTool } from './types.js';

const notBuilt = (what: string) => () =>
  Promise.reject(
    notSupported(`${what} is not available on this Herald yet.`, {
      hint: 'Upload your own media with POST /upload and use its path as an attachment instead.',
    }),
  );

const generating = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export const generateImageTool = defineTool({
  name: 'generateImageTool',
  title: 'Generate an image',
  description: 'Generates an image from a prompt and stores it as media; answers {id, path}. Use the path as an attachment in schedulePostTool.',
  annotations: generating,
  mcp: true,
  input: z.object({ prompt: z.string().min(1).describe('What the image should show') }),
  output: z.object({ id: z.string(), path: z.string() }),
  handler: notBuilt('Image generation'),
});

export const generateVideoOptions = defineTool({
  name: 'generateVideoOptions',
  title: 'List video generators',
  description: 'Lists the video generators (type, output orientation, helper functions, customParams JSON Schema). Call before generateVideoTool.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({}),
  output: z.object({ video: z.array(z.record(z.string(), z.unknown())) }),
  handler: notBuilt('Video generation'),
});

export const videoFunctionTool = defineTool({
  name: 'videoFunctionTool',
  title: 'Run a video generator helper',
  description: 'Runs a helper function of a video generator, e.g. loadVoices of image-text-slides to get voice ids for customParams.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  mcp: true,
  input: z.object({ identifier: z.string().min(1), functionName: z.string().min(1) }),
  output: z.looseObject({}),
  rest: { method: 'POST', path: '/video/function' },
  handler: notBuilt('Video generation'),
});

export const generateVideoTool = defineTool({
  name: 'generateVideoTool',
  title: 'Generate a video',
  description: 'Generates a video with one of the generators of generateVideoOptions; answers {url} to use as an attachment.',
  annotations: generating,
  mcp: true,
  input: z.object({
    identifier: z.string().min(1),
    output: z.enum(['vertical', 'horizontal']),
    customParams: z.array(z.object({ key: z.string(), value: z.any() })),
  }),
  output: z.object({ url: z.string() }),
  rest: {
    method: 'POST',
    path: '/generate-video',
    toInput: ({ body }) => {
      const request = (body ?? {}) as { type?: unknown; output?: unknown; customParams?: unknown };
      const params = request.customParams && typeof request.customParams === 'object' ? Object.entries(request.customParams) : [];
      return { identifier: request.type, output: request.output, customParams: params.map(([key, value]) => ({ key, value })) };
    },
  },
  handler: notBuilt('Video generation'),
});
