import { z } from 'zod';
import { defineTool } from './types.js';
import { editPost } from './internal/post-edit.js';
import { PostValidationError } from './internal/create-posts.js';
import { idParam, imageSchema, utcDateTime } from './shapes.js';


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
    'PUT /posts/{id}: edits a post that has not gone out (draft, scheduled, waiting for approval, or failed), or what went out (below): `date`, `value` (the whole chain, ' +
    'first item first: [{content, image: [{id, path}], delay?}]; items may be added or removed), `settings` (the platform settings). Omitted fields stay as they are. ' +
    'The same validation as creation (platform rules, length, media, the duplicate guard: allowDuplicate: true when a repetition is intended). ' +
    'A scheduled post moves to its new date. Under the approval gate an agent\'s edit sends the post back for approval. ' +
    'A PUBLISHED post is edited on its platform where the platform\'s API allows (the text of each item and settings the platform can change; not the date, the media or the number of items): ' +
    'the edit is kept as platformChange {action: "edit", state: "pending"} and made by a job, the stored text changes once the platform took it; an agent\'s edit under the approval gate waits ' +
    '(state "awaiting_approval") for an owner. Where the platform cannot edit, 409 with the reason. Answers the post with a preview of each item as the platform will receive it.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({
    id: idParam.describe('Post id (any item of its chain)'),
    date: utcDateTime.optional().describe('New publication date, UTC'),
    value: z
      .array(z.object({ content: z.string(), image: z.array(imageSchema).default([]), delay: z.number().int().min(0).default(0) }))
      .min(1)
      .optional()
      .describe('The whole chain, first item first: HTML content and media ({id, path} from the media library, or an https URL as both)'),
    settings: z.record(z.string(), z.unknown()).optional().describe('Platform settings (integrationSchema); __type is ignored'),
    allowDuplicate: z.boolean().optional(),
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
