// The calendar's filters: channel, customer, state and author. Posts do not record a person as their author yet (that
// comes with the audit trail): "author" is what exists today, how the post was created (MCP: an agent; the REST API,
// which includes this console) and, for posts that went through the approval gate, the OAuth app that asked.
import type { Request, Response } from 'express';
import { calendarPosts, fullContents, type CalendarPost } from '../../../tools/internal/calendar.js';
import { listIntegrations } from '../../../tools/internal/integrations.js';
import { asCaller } from '../../../tools/internal/visibility.js';
import { CustomerSchema } from '../../db/entities.js';
import { excerpt, hasHtmlTag } from '../../lib/content.js';
import type { Services } from '../../../tools/types.js';
import { html, type Markup } from './html.js';
import { STATUS_LABELS } from './post-pages.js';
import { consoleCaller } from './session.js';

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
function authorsOf(post: CalendarPost): string[] {
  const authors = [post.creationMethod === 'MCP' ? 'mcp' : 'api'];
  if (post.appId) authors.push(`app:${post.appId}`);
  return authors;
}

const matches = (post: CalendarPost, filters: CalendarFilters) =>
  (!filters.channel || post.integrationId === filters.channel) &&
  (!filters.state || post.publishStatus === filters.state) &&
  (!filters.author || authorsOf(post).includes(filters.author));

/** A post as a calendar cell shows it. */
export interface CalendarEntry extends CalendarPost {
  integration: { id: string; name: string; providerIdentifier: string };
  excerpt: string;
}

export interface CalendarData {
  posts: CalendarEntry[];
  channels: { id: string; name: string }[];
  customers: { id: string; name: string }[];
  apps: { id: string; name: string }[];
}

const EXCERPT = 60;
/** Text the start of a cut content must hold to settle its excerpt: an entity cut at the end changes at most its last characters. */
const SETTLED = 140;

/**
 * The excerpt of a post from the start of its content (tools/internal/calendar.ts reads at most CONTENT_PREFIX
 * characters), exactly as `excerpt` of the whole content; undefined when the start cannot settle it (the whole content is
 * then read). A start cut at its last `<` holds no tag cut in half, and stripping tags is local to each tag, so its text
 * begins the whole text; comments, scripts and styles may run past the cut, so a start with one is not settled.
 */
function excerptOfStart(post: CalendarPost): string | undefined {
  if (!post.cut) return excerpt(post.content, EXCERPT);
  const start = post.html ? post.content.slice(0, Math.max(0, post.content.lastIndexOf('<'))) : post.content;
  if (post.html && (!hasHtmlTag(start) || /<!--|<script|<style/i.test(start))) return undefined;
  return excerpt(start, SETTLED + 20).length >= SETTLED ? excerpt(start, EXCERPT) : undefined;
}

/**
 * Every post of the range that passes the filters, with the choices of the filter form: a constant number of queries
 * whatever the number of posts (the posts in one statement, the channels, the customers, and at most one more for the
 * whole content of posts whose start does not settle their excerpt).
 */
export async function calendarData(services: Services, response: Response, range: { start: Date; end: Date }, filters: CalendarFilters): Promise<CalendarData> {
  const caller = consoleCaller(response);
  const { organizationId } = caller;
  const em = services.orm.em.fork();
  // As the caller: listIntegrations answers only the channels it may see (visibility.ts), and only their posts are read.
  return asCaller(caller, async () => {
    const channels = await listIntegrations(em, organizationId);
    // The customer filter as the post list applies it: the channels of that customer (an empty one is no filter).
    const inRange = channels.filter((channel) => !filters.customer || channel.customerId === filters.customer);
    const byId = new Map(inRange.map((channel) => [channel.id, { id: channel.id, name: channel.name, providerIdentifier: channel.providerIdentifier }]));
    const all = await calendarPosts(em, organizationId, [...byId.keys()], range);
    const apps = new Map<string, string>();
    for (const post of all) if (post.appId) apps.set(post.appId, post.appName ?? post.appId);
    const shown = all.filter((post) => matches(post, filters));
    const excerpts = shown.map(excerptOfStart);
    const unsettled = shown.filter((_, index) => excerpts[index] === undefined).map((post) => post.id);
    const whole = await fullContents(em, organizationId, unsettled);
    const customers = await em.find(CustomerSchema, { organizationId }, { orderBy: { name: 'asc' }, fields: ['id', 'name'] });
    return {
      posts: shown.map((post, index) => ({ ...post, integration: byId.get(post.integrationId)!, excerpt: excerpts[index] ?? excerpt(whole.get(post.id) ?? post.content, EXCERPT) })),
      channels: channels.map((channel) => ({ id: channel.id, name: channel.name })),
      customers: customers.map((customer) => ({ id: customer.id, name: customer.name })),
      apps: [...apps].map(([id, name]) => ({ id, name })),
    };
  });
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
