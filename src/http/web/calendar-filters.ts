// The calendar's filters: channel, customer, state and author. Posts do not record a person as their author yet (that
// comes with the audit trail): "author" is what exists today, how the post was created (MCP: an agent; the REST API,
// which includes this console) and, for posts that went through the approval gate, the OAuth app that asked.
import type { Request, Response } from 'express';
import type { PostRecord } from '../../../tools/internal/posts.js';
import { listIntegrations } from '../../../tools/internal/integrations.js';
import { postList } from '../../../tools/post-list.js';
import { CustomerSchema } from '../../db/entities.js';
import type { Services } from '../../../tools/types.js';
import { html, type Markup } from './html.js';
import { STATUS_LABELS } from './post-pages.js';
import { consoleCaller, runConsoleTool } from './session.js';

export interface CalendarFilters {
  channel: string;
  customer: string;
  state: string;
  author: string;
}

const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 200) : '');

export function filtersOf(request: Request): CalendarFilters {
  const state = text(request.query.state);
  return {
    channel: text(request.query.channel),
    customer: text(request.query.customer),
    state: state in STATUS_LABELS ? state : '',
    author: text(request.query.author),
  };
}

/** The filters as query parameters (only those set), to keep them on links. */
export function filterQuery(filters: CalendarFilters): string {
  return Object.entries(filters)
    .filter(([, value]) => value)
    .map(([key, value]) => `&${key}=${encodeURIComponent(value)}`)
    .join('');
}

/** The author of a post as the filter knows it. */
function authorsOf(post: PostRecord): string[] {
  const authors = [post.creationMethod === 'MCP' ? 'mcp' : 'api'];
  if (post.approval?.appId) authors.push(`app:${post.approval.appId}`);
  return authors;
}

const matches = (post: PostRecord, filters: CalendarFilters) =>
  (!filters.channel || post.integration.id === filters.channel) &&
  (!filters.state || post.publishStatus === filters.state) &&
  (!filters.author || authorsOf(post).includes(filters.author));

export interface CalendarData {
  posts: PostRecord[];
  channels: { id: string; name: string }[];
  customers: { id: string; name: string }[];
  apps: { id: string; name: string }[];
}

/** Every post of the range (all pages of postsListTool) that passes the filters, with the choices of the filter form. */
export async function calendarData(services: Services, response: Response, range: { start: Date; end: Date }, filters: CalendarFilters): Promise<CalendarData> {
  const organizationId = consoleCaller(response).organizationId;
  const em = services.orm.em.fork();
  const all: PostRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await runConsoleTool(
      postList,
      { startDate: range.start.toISOString(), endDate: new Date(range.end.getTime() - 1).toISOString(), customer: filters.customer || undefined, cursor },
      response,
      services,
    );
    all.push(...(page.posts as unknown as PostRecord[]));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const apps = new Map<string, string>();
  for (const post of all) if (post.approval?.appId) apps.set(post.approval.appId, post.approval.appName ?? post.approval.appId);
  const channels = await listIntegrations(em, organizationId);
  const customers = await em.find(CustomerSchema, { organizationId }, { orderBy: { name: 'asc' }, fields: ['id', 'name'] });
  return {
    posts: all.filter((post) => matches(post, filters)),
    channels: channels.map((channel) => ({ id: channel.id, name: channel.name })),
    customers: customers.map((customer) => ({ id: customer.id, name: customer.name })),
    apps: [...apps].map(([id, name]) => ({ id, name })),
  };
}

const option = (value: string, label: string, current: string) => html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;

/** The filter fields of the calendar's form. */
export function filterFields(data: CalendarData, filters: CalendarFilters): Markup {
  return html`<div><label for="channel">Channel</label><select id="channel" name="channel">${option('', 'All channels', filters.channel)}${data.channels.map((item) => option(item.id, item.name, filters.channel))}</select></div>
    <div><label for="customer">Customer</label><select id="customer" name="customer">${option('', 'All customers', filters.customer)}${data.customers.map((item) => option(item.id, item.name, filters.customer))}</select></div>
    <div><label for="state">State</label><select id="state" name="state">${option('', 'All states', filters.state)}${Object.entries(STATUS_LABELS).map(([value, [label]]) => option(value, label, filters.state))}</select></div>
    <div><label for="author">Created by</label><select id="author" name="author" aria-describedby="author-hint">${option('', 'Anyone', filters.author)}${option('mcp', 'Agents over MCP', filters.author)}${option('api', 'The REST API or this console', filters.author)}${data.apps.map((app) => option(`app:${app.id}`, `${app.name} (OAuth app)`, filters.author))}</select>
      <p class="hint" id="author-hint">How the post was created; OAuth apps are known for posts that needed approval.</p></div>`;
}
