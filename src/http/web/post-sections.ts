// What a post's page shows after publishing (issue 24): its metrics since publication, from the snapshots Herald took
// (metrics-snapshots.ts; no platform call on a page view), drawn like the channel charts (chart-pages.ts), with why a
// chart is empty; and the comments people left on it (comment-pages.ts). post-pages.ts calls `afterPublishing` once.
import type { Request, Response } from 'express';
import { isoDay } from '../../../providers/shared.js';
import { providerOf } from '../../../tools/internal/integrations.js';
import { postAnswer, storedPostSnapshots } from '../../../tools/internal/metrics-history.js';
import { POST_SNAPSHOT_AGES_HOURS, postHistoryStatus } from '../../../tools/internal/metrics-snapshots.js';
import type { PostView } from '../../../tools/internal/post-view.js';
import type { Services } from '../../../tools/types.js';
import { html, type Markup } from './html.js';
import { metricFigure } from './chart-pages.js';
import { postComments } from './comment-pages.js';

const DAY_MS = 86_400_000;
const ages = POST_SNAPSHOT_AGES_HOURS.map((hours) => (hours < 24 ? `${hours} h` : `${hours / 24} d`)).join(', ');

async function postChart(services: Services, view: PostView): Promise<Markup> {
  const { root, integration } = view;
  const provider = providerOf(integration);
  const heading = html`<h2 id="post-metrics-title">Metrics since publication</h2>`;
  const say = (why: string) => html`<section aria-labelledby="post-metrics-title" id="post-metrics">${heading}<p class="hint" role="status" id="post-metrics-empty">${why}</p></section>`;
  if (!provider.postAnalytics) return say(`${provider.name} offers no post analytics API: Herald cannot read this post's metrics.`);
  if (root.state !== 'PUBLISHED' || !root.publishedAt) return say('Not published yet: Herald reads a post\'s metrics from an hour after it is published.');
  const em = services.orm.em.fork();
  const snapshots = await storedPostSnapshots(em, root.organizationId, [root.id]);
  const now = services.now();
  const days = Math.min(365, Math.max(1, Math.ceil((now.getTime() - root.publishedAt.getTime()) / DAY_MS) + 1));
  const metrics = postAnswer(undefined, snapshots, isoDay(now), days);
  if (metrics.length === 0) {
    const status = (await postHistoryStatus(em, root.organizationId, [root.id])).get(root.id);
    if (status?.status === 'failed' || status?.status === 'retrying') return say(`The last read failed: ${status.lastError ?? 'no reason given'}${status.status === 'retrying' ? ' (Herald tries again soon).' : ''}`);
    if (status?.status === 'needs_reconnection') return say('The channel needs reconnecting: Herald cannot read this post\'s metrics until then.');
    return say(`Not read yet: Herald reads a post's metrics ${ages} after publication (the first in about an hour).`);
  }
  return html`<section aria-labelledby="post-metrics-title" id="post-metrics">${heading}
    <p class="hint">As Herald read them (${new Set(snapshots.map((snapshot) => snapshot.takenAt.getTime())).size} readings; the last of each day shown), read ${ages} after publication.</p>
    ${metrics.map((metric) =>
      metricFigure({
        id: `post-metric-${metric.label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
        caption: metric.label,
        labels: [metric.label],
        rows: metric.data.map((point) => [point.date.slice(0, 10), Number(point.total)] as [string, number]),
      }),
    )}</section>`;
}

/** The post's chart and its comments, for its page. */
export async function afterPublishing(services: Services, request: Request, response: Response, view: PostView): Promise<Markup> {
  return html`${await postChart(services, view)}${view.root.state === 'PUBLISHED' ? await postComments(services, request, response, view.root.id) : ''}`;
}
