// Recurring posts (tools/internal/recurrence.ts): every ten minutes the rules whose next occurrence falls within the
// horizon are extended (their occurrences made as posts ahead of time), one run at a time across processes (an advisory
// lock); each date is claimed once besides, so a create or change extending the same rule meanwhile makes nothing twice.
// Registered in src/jobs/index.ts like the feeds: `...recurrenceTasks(services)` and RECURRENCE_CRONTAB.
import type { Task } from 'graphile-worker';
import type { Services } from '../../tools/types.js';
import { extendDueRules } from '../../tools/internal/recurrence.js';
import { exclusively } from './exclusive.js';

export const EXTEND_RECURRENCES_TASK = 'extend_recurrences';
export const RECURRENCE_CRONTAB = `*/10 * * * * ${EXTEND_RECURRENCES_TASK} ?max=1\n`;

export function recurrenceTasks(services: Services): Record<string, Task> {
  return {
    [EXTEND_RECURRENCES_TASK]: async (_payload, helpers) => {
      await exclusively(helpers, EXTEND_RECURRENCES_TASK, async () => {
        await extendDueRules(services);
      });
    },
  };
}
