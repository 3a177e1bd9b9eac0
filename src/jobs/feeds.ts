// Feeds to posts (tools/internal/feeds.ts): every minute the feeds that are due are read, one run at a time across
// processes (an advisory lock). Each feed polls at its own interval, offset within it by its id, and a run takes at most
// a share of the due feeds, so many feeds never all poll at once.
// Registered in src/jobs/index.ts like the analytics history: `...feedTasks(services)` and FEEDS_CRONTAB.
import type { Task } from 'graphile-worker';
import type { Services } from '../../tools/types.js';
import { pollDueFeeds } from '../../tools/internal/feeds.js';
import { exclusively } from './exclusive.js';

export const POLL_FEEDS_TASK = 'poll_feeds';
export const FEEDS_CRONTAB = `* * * * * ${POLL_FEEDS_TASK} ?max=1\n`;

export function feedTasks(services: Services): Record<string, Task> {
  return {
    [POLL_FEEDS_TASK]: async (_payload, helpers) => {
      await exclusively(helpers, POLL_FEEDS_TASK, async () => {
        await pollDueFeeds(services);
      });
    },
  };
}
