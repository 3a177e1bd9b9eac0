import { z } from 'zod';
import { defineTool } from './types.js';
import { editPost } from './internal/post-edit.js';
import { PostValidationError } from './internal/create-posts.js';
import { idParam, mediaReference, utcDateTime } from './shapes.js';


/** A post record (as GET /posts lists it) plus each item's preview as the platform receives it. */
const postWithPreview = z.looseObject({
  id: z.string(),
  state: z.string(),
  publishStatus: z.string(),
  date: z.string(),
  preview: z.object({
    maxLength: z.number(),
    items: z.array(z.object({ position: z.number(), text: z.string(), length: z.number(), maxLength: z.number(), overLimit: z.boolean() }).loose()),
  }).loose(),
});

export const updatePost = defineTool({
  name: 'updatePost',
  title: 'Edit a post',
  description:
    "Edits one channel's post and its chain, never the group's other posts: date, value (the whole chain) or settings; omitted fields stay. Validated like schedulePostTool; under the approval gate it goes back for approval. A published post is edited on its platform where its API allows (text, settings), else conflict.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({
    id: idParam.describe('Post id (any item of its chain)'),
    date: utcDateTime.optional().describe('New publication date, UTC'),
    value: z
      .array(z.object({ content: z.string(), image: z.array(mediaReference).default([]), delay: z.number().int().min(0).default(0) }))
      .min(1)
      .optional()
      .describe('The whole chain, first item first; image as schedulePostTool attachments'),
    settings: z.record(z.string(), z.unknown()).optional().describe('Platform settings (integrationSchema)'),
    allowDuplicate: z.boolean().optional().describe('true when repeating a recent post is intended'),
  }),
  output: postWithPreview,
  rest: { method: 'PUT', path: '/posts/:id', largeBody: true },
  handler: async (input, context) => {
    const { __type: _ignored, ...settings } = input.settings ?? {};
    try {
      const view = await editPost(context, context.em, input.id, {
        date: input.date ? new Date(input.date) : undefined,
        items: input.value?.map((item) => ({
          content: item.content,
          media: item.image.map((image) => ({ id: image.id, path: image.path, ...(image.alt ? { alt: image.alt } : {}), ...(image.thumbnail ? { thumbnail: image.thumbnail } : {}) })),
          delay: item.delay,
        })),
        settings: input.settings ? settings : undefined,
        allowDuplicate: input.allowDuplicate,
      });
      context.log?.(view.record.state === 'AWAITING_APPROVAL' ? 'notice' : 'info', `Post ${view.record.id} saved (${view.record.state}, ${view.record.date}).`, { postId: view.record.id });
      return { ...view.record, preview: view.preview };
    } catch (error) {
      if (error instanceof PostValidationError) context.log?.('warning', `Nothing was changed: ${error.message}`);
      throw error;
    }
  },
});
