// The integration settings record of the spec: rules, maxLength, settings (JSON Schema or the "no settings" string), tools.
import { z } from 'zod';
import type { Provider } from '../../providers/types.js';

export const NO_SETTINGS = 'No additional settings required';

export const settingsRecordSchema = z.object({
  rules: z.string(),
  maxLength: z.number(),
  settings: z.union([z.record(z.string(), z.unknown()), z.string()]),
  tools: z.array(
    z.object({
      methodName: z.string(),
      description: z.string(),
      dataSchema: z.array(z.object({ key: z.string(), type: z.string(), description: z.string() })),
    }),
  ),
});
export type SettingsRecord = z.output<typeof settingsRecordSchema>;

export function settingsJsonSchema(provider: Provider): Record<string, unknown> | string {
  if (!provider.settings || Object.keys(provider.settings.shape).length === 0) return NO_SETTINGS;
  const schema = z.toJSONSchema(provider.settings, { target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** `channel`: a connected channel's stored facts (its instance's limits), for integrationSettings of that channel. */
export function settingsRecord(provider: Provider, isPremium: boolean, channel?: Record<string, unknown>): SettingsRecord {
  return {
    rules: provider.rules,
    maxLength: provider.maxLength({ isPremium, channel }),
    settings: settingsJsonSchema(provider),
    tools: provider.tools.map((tool) => ({ methodName: tool.methodName, description: tool.description, dataSchema: tool.dataSchema })),
  };
}
