import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { findProvider, providerIdentifiers } from '../providers/index.js';
import { defineTool, readOnly } from './types.js';
import { settingsRecord, settingsRecordSchema } from './internal/settings-record.js';
import { wrapped } from './shapes.js';

export const integrationSchema = defineTool({
  name: 'integrationSchema',
  title: 'Platform rules and settings',
  description:
    'Returns what a platform accepts before you write a post for it: `rules` (media and format rules), `maxLength` (characters, counted after conversion), ' +
    '`settings` (JSON Schema of the per-post settings, or the string "No additional settings required") and `tools` (helper methods you can run with triggerTool). ' +
    `Call it with the channel's \`platform\` from integrationList before schedulePostTool. Platforms: ${providerIdentifiers.join(', ')}. ` +
    'Set isPremium to true for an X premium account (longer posts).',
  annotations: readOnly,
  mcp: true,
  input: z.object({
    isPremium: z.boolean().describe('true for premium accounts with higher limits (X premium); false otherwise'),
    platform: z.string().describe('Platform identifier, e.g. "bluesky" (the `platform` field of integrationList)'),
  }),
  output: wrapped(settingsRecordSchema),
  handler: async (input) => {
    const provider = findProvider(input.platform.trim().toLowerCase());
    if (!provider) {
      throw invalidInput(`Unknown platform "${input.platform}".`, { hint: `Use one of: ${providerIdentifiers.join(', ')}.` });
    }
    return { output: settingsRecord(provider, input.isPremium) };
  },
});
