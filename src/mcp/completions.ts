// completion/complete for the resource templates' parameters and the prompts' arguments: channel ids (matched on the id
// or the channel's name), platform identifiers, post ids (recent and upcoming), numbers of days and dates.
import type { CompleteRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Handle } from './surface.js';
import { IntegrationSchema, PostSchema } from '../db/entities.js';
import { providerIdentifiers } from '../../providers/index.js';
import type { Caller, Services } from '../../tools/types.js';
import { PROMPTS, type ArgumentValues } from './prompts.js';

const MAX_VALUES = 100;
const DAY_MS = 86_400_000;

function answer(values: string[]) {
  return { completion: { values: values.slice(0, MAX_VALUES), total: values.length, hasMore: values.length > MAX_VALUES } };
}

async function channelIds(services: Services, caller: Caller, typed: string): Promise<string[]> {
  const needle = typed.toLowerCase();
  const channels = await services.orm.em.fork().find(IntegrationSchema, { organizationId: caller.organizationId, deletedAt: null }, { orderBy: { name: 'asc', id: 'asc' } });
  return channels.filter((channel) => channel.id.toLowerCase().startsWith(needle) || channel.name.toLowerCase().includes(needle)).map((channel) => channel.id);
}

async function valuesFor(services: Services, caller: Caller, kind: ArgumentValues | 'posts', typed: string): Promise<string[]> {
  switch (kind) {
    case 'channels': {
      // A comma-separated list: complete its last entry, keeping the ones before.
      const cut = typed.lastIndexOf(',');
      const before = cut >= 0 ? typed.slice(0, cut + 1) : '';
      const chosen = new Set(before.split(',').map((id) => id.trim()).filter(Boolean));
      return (await channelIds(services, caller, typed.slice(cut + 1).trim())).filter((id) => !chosen.has(id)).map((id) => `${before}${id}`);
    }
    case 'platform':
      return providerIdentifiers.filter((identifier) => identifier.startsWith(typed.toLowerCase()));
    case 'days':
      return ['7', '14', '30', '90'].filter((value) => value.startsWith(typed));
    case 'date': {
      const today = services.now();
      return Array.from({ length: 14 }, (_, index) => new Date(today.getTime() + index * DAY_MS).toISOString().slice(0, 10)).filter((value) => value.startsWith(typed));
    }
    case 'posts': {
      const now = services.now();
      const posts = await services.orm.em.fork().find(
        PostSchema,
        { organizationId: caller.organizationId, position: 0, deletedAt: null, publishDate: { $gte: new Date(now.getTime() - 30 * DAY_MS), $lte: new Date(now.getTime() + 90 * DAY_MS) } },
        { orderBy: { publishDate: 'desc', id: 'asc' }, limit: 500, fields: ['id'] },
      );
      return posts.map((post) => post.id).filter((id) => id.startsWith(typed));
    }
    default:
      return [];
  }
}

const TEMPLATE_ARGUMENTS: Record<string, Record<string, ArgumentValues | 'posts'>> = {
  'herald://integrations/{id}': { id: 'channels' },
  'herald://posts/{id}': { id: 'posts' },
  'herald://platforms/{identifier}': { identifier: 'platform' },
};

export function registerCompletions(handle: Handle, services: Services, caller: Caller): void {
  handle('completion/complete', async (params: CompleteRequest['params']) => {
    const { ref, argument } = params;
    let kind: ArgumentValues | 'posts' | undefined;
    if (ref.type === 'ref/resource') kind = TEMPLATE_ARGUMENTS[ref.uri]?.[argument.name];
    else kind = PROMPTS.find((prompt) => prompt.name === ref.name)?.arguments.find((item) => item.name === argument.name)?.values;
    // Single ids (a template parameter) complete one channel, never a list.
    if (kind === 'channels' && ref.type === 'ref/resource') return answer(await channelIds(services, caller, argument.value));
    return answer(kind ? await valuesFor(services, caller, kind, argument.value) : []);
  });
}
