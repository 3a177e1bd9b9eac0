import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { createPostBody, restPlanEntries } from './create-post.js';
import { schedulePostInput, socialPostEntries } from './schedule-post-tool.js';
import { postPreviewSchema, previewPlan } from './internal/preview.js';

const previewAnnotations = { ...readOnly, idempotentHint: true };

export const validatePostTool = defineTool({
  name: 'validatePostTool',
  title: 'Preview posts without creating them',
  description:
    "schedulePostTool's dry run, same arguments, nothing created. Per item: text, exactly what the platform receives (Telegram HTML, X plain text); visibleText, what readers see, counted the platform's way against maxLength; formatting it cannot show; media accepted or refused. valid false: errors is what schedulePostTool would answer. Show the user the text first.",
  annotations: previewAnnotations,
  mcp: true,
  // The same arguments as schedulePostTool; an idempotencyKey sent along is ignored (nothing is created).
  input: schedulePostInput.omit({ idempotencyKey: true }),
  listedInput: z.object({
    socialPost: z.array(z.object({}).loose()).min(1).describe("Exactly schedulePostTool's socialPost"),
    allowDuplicate: z.boolean().optional(),
  }),
  output: postPreviewSchema,
  handler: (input, { em, caller, services }) => previewPlan(services, em, caller.organizationId, { creationMethod: 'MCP', entries: socialPostEntries(input), allowDuplicate: input.allowDuplicate }),
});

export const validatePost = defineTool({
  name: 'validatePost',
  title: 'Preview posts without creating them (REST)',
  description:
    'POST /posts/validate: the same body as POST /posts; nothing is created. Answers per channel entry and per value the converted text, its length against ' +
    "the platform's limit, media accepted or refused with the rule, settings checked, warnings and the slot the post would take.",
  annotations: previewAnnotations,
  mcp: false,
  input: createPostBody,
  output: postPreviewSchema,
  rest: { method: 'POST', path: '/posts/validate', largeBody: true },
  handler: (input, { em, caller, services }) => previewPlan(services, em, caller.organizationId, { creationMethod: 'API', entries: restPlanEntries(input), allowDuplicate: input.allowDuplicate }),
});
