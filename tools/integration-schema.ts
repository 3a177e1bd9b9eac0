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
    "A platform's rules, maxLength (counted after conversion), settings (JSON Schema of schedulePostTool's settings, or \"No additional settings required\") and tools (triggerTool helpers). Call it before writing for a platform.",
  annotations: readOnly,
  mcp: true,
  input: z.object({
    isPremium: z.boolean().optional().describe('true: the X Premium limit (a connected channel\'s own is read from X)'),
    platform: z.string().describe('Platform identifier from integrationList, e.g. x'),
  }),
  output: wrapped(settingsRecordSchema),
  handler: async (input) => {
    const provider = findProvider(input.platform.trim().toLowerCase());
    if (!provider) {
      throw invalidInput(`Unknown platform "${input.platform}".`, { hint: `Use one of: ${providerIdentifiers.join(', ')}.` });
    }
    return { output: settingsRecord(provider, input.isPremium === true) };
  },
});
