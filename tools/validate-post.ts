import { defineTool, readOnly } from './types.js';
import { createPostBody, restPlanEntries } from './create-post.js';
import { schedulePostInput, socialPostEntries } from './schedule-post-tool.js';
import { postPreviewSchema, previewPlan } from './internal/preview.js';

const previewAnnotations = { ...readOnly, idempotentHint: true };

export const validatePostTool = defineTool({
  name: 'validatePostTool',
  title: 'Preview posts without creating them',
  description:
    'Dry run of schedulePostTool: takes exactly the same arguments and creates nothing. Answers, per socialPost item and per post/comment, ' +
    'the text exactly as the platform receives it (after HTML conversion, with links in their short form when shortLink is true), its length in the ' +
    "platform's own counting (X weighted, Bluesky graphemes) against maxLength, each attachment accepted or refused with the platform's rule, the settings checked, " +
    'warnings (media the platform must fetch from a public URL, short links, a channel that needs reconnecting or whose token expires before the date), ' +
    'and the slot the post would take. valid: true means schedulePostTool would accept it as it is; otherwise errors is what it would answer.',
  annotations: previewAnnotations,
  mcp: true,
  // The same arguments as schedulePostTool; an idempotencyKey sent along is ignored (nothing is created).
  input: schedulePostInput.omit({ idempotencyKey: true }),
  output: postPreviewSchema,
  handler: (input, { em, caller, services }) => previewPlan(services, em, caller.organizationId, { creationMethod: 'MCP', entries: socialPostEntries(input) }),
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
  handler: (input, { em, caller, services }) => previewPlan(services, em, caller.organizationId, { creationMethod: 'API', entries: restPlanEntries(input) }),
});
