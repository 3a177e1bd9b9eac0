// The audit trail's retention: once a day, events older than AUDIT_RETENTION_DAYS go (tools/internal/audit.ts).
// Registered in src/jobs/index.ts like the analytics history's prune: `...auditTasks(services)` and AUDIT_CRONTAB.
import type { Task } from 'graphile-worker';
import type { Services } from '../../tools/types.js';
import { pruneAudit } from '../../tools/internal/audit.js';

export const PRUNE_AUDIT_TASK = 'prune_audit';
export const AUDIT_CRONTAB = `51 3 * * * ${PRUNE_AUDIT_TASK} ?max=1\n`;

export function auditTasks(services: Services): Record<string, Task> {
  return {
    [PRUNE_AUDIT_TASK]: async () => {
      const gone = await pruneAudit(services.orm.em.fork(), services.now(), services.config.auditRetentionDays);
      if (gone > 0) services.logger.info({ events: gone, retentionDays: services.config.auditRetentionDays }, 'pruned the audit trail');
    },
  };
}
