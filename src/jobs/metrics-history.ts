// Analytics history: every 10 minutes the due channel and post reads are taken (each channel daily, each post on a
// decaying schedule: tools/internal/metrics-snapshots.ts); once a day history older than ANALYTICS_HISTORY_DAYS goes.
// One run at a time across processes (an advisory lock): a slow run is never overlapped by the next tick.
import type { Task } from 'graphile-worker';
import type { Services } from '../../tools/types.js';
import { pruneAnalyticsHistory, snapshotDueMetrics } from '../../tools/internal/metrics-snapshots.js';
import { exclusively } from './exclusive.js';

export const SNAPSHOT_METRICS_TASK = 'snapshot_metrics';
export const PRUNE_METRICS_TASK = 'prune_metrics_history';
export const METRICS_HISTORY_CRONTAB = `*/10 * * * * ${SNAPSHOT_METRICS_TASK} ?max=1\n37 3 * * * ${PRUNE_METRICS_TASK} ?max=1\n`;

export function metricsHistoryTasks(services: Services): Record<string, Task> {
  return {
    [SNAPSHOT_METRICS_TASK]: async (_payload, helpers) => {
      await exclusively(helpers, SNAPSHOT_METRICS_TASK, async () => {
        await snapshotDueMetrics(services);
      });
    },
    [PRUNE_METRICS_TASK]: async () => {
      await pruneAnalyticsHistory(services);
    },
  };
}
