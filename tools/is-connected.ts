import { z } from 'zod';
import { defineTool, readOnly } from './types.js';

export const isConnected = defineTool({
  name: 'isConnected',
  title: 'Check the credential',
  description: 'Answers {connected: true} when the API key or OAuth token is valid (an invalid one never reaches this tool: it gets 401).',
  annotations: readOnly,
  mcp: false,
  input: z.object({}),
  output: z.object({ connected: z.boolean() }),
  rest: { method: 'GET', path: '/is-connected', toInput: () => ({}) },
  handler: async () => ({ connected: true }),
});
