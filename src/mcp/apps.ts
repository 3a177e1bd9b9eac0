// MCP Apps (the io.modelcontextprotocol/ui extension, @modelcontextprotocol/ext-apps): two views a host that renders apps
// (Claude, ChatGPT, VS Code, Goose...) draws beside a tool's answer, in a sandboxed iframe.
// - ui://herald/post-preview, linked from validatePostTool, schedulePostTool and the approval tools: each channel's post
//   as its platform shows it (platform-preview.ts, the console's renderer), with Schedule, Edit and, for a caller with the
//   approve scope, Approve, each calling the tool through the host's app bridge.
// - ui://herald/week, linked from postsListTool: what is scheduled, day by day in the organization's zone, with the
//   previous and next weeks a click away.
// The views are drawn here, on the server: a linked tool's answer carries the drawn view in its result's _meta
// (`herald/view`); its text and structuredContent stay exactly as they were. A client that does not say it renders apps
// (the extension in its capabilities) gets none of this: its tools/list, resources and answers are unchanged. The
// view's one script only speaks the bridge's JSON-RPC (ui/initialize, tool results, tools/call) and puts the drawn HTML in
// place; the HTML is escaped by html.ts. No external origin: the CSP metadata declares none.
// Registered by one line of server.ts (registerSurface, so both protocol eras have them): it wraps the handlers the features
// register for tools/list, tools/call, resources/list and resources/read.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { asDomainError, toToolErrorText } from '../errors.js';
import { approvePostTool } from '../../tools/approve-post.js';
import { canCall, runTool } from '../../tools/runner.js';
import type { Caller, Services } from '../../tools/types.js';
import { postView } from '../../tools/internal/post-view.js';
import type { PostPreview } from '../../tools/internal/preview.js';
import { organizationZone } from '../../tools/internal/time-zones.js';
import { hasScope } from '../../tools/internal/scopes.js';
import { excerpt } from '../lib/content.js';
import { newId } from '../lib/crypto.js';
import { jsonSchema } from '../http/openapi.js';
import { html, type Markup } from '../http/web/html.js';
import { platformPreview, PLATFORM_PREVIEW_STYLE, storedEntry } from '../http/web/platform-preview.js';
import { formatWhen } from '../http/web/zones.js';
import type { SessionContext } from './sessions.js';
import type { Handle, HandledMethod, Handler } from './surface.js';

export const PREVIEW_VIEW = 'ui://herald/post';
export const WEEK_VIEW = 'ui://herald/week';
/** Where a linked tool's answer carries its drawn view. */
export const VIEW_META_KEY = 'herald/view';

const LINKS: Record<string, string> = {
  validatePostTool: PREVIEW_VIEW,
  schedulePostTool: PREVIEW_VIEW,
  approvePost: PREVIEW_VIEW,
  postsListTool: WEEK_VIEW,
};
// Only the current form (`_meta.ui.resourceUri`): the deprecated flat key ext-apps also writes costs 124 bytes a turn.
const uiMeta = (uri: string) => ({ ui: { resourceUri: uri } });

/**
 * The approval tools are REST tools (mcp: false); a view's Approve button calls approvePost through the host, so it is
 * offered over MCP to a caller with the approve scope whose client renders apps, as an app-only tool (visibility ["app"]:
 * the host does not offer it to the model).
 */
const APP_TOOLS = [approvePostTool];

const VIEWS = [
  { uri: PREVIEW_VIEW, name: 'post-preview', title: 'Post preview', description: 'Each channel\'s post as its platform shows it, with Schedule, Edit and Approve' },
  { uri: WEEK_VIEW, name: 'week', title: 'Scheduled this week', description: 'What is scheduled, day by day in the organization\'s time zone' },
];
// Nothing from outside the view's own document: no fetch, no script or style origin, no frame.
const VIEW_META = { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [] }, prefersBorder: true } };

/**
 * Whether the client said at initialization that it renders MCP Apps: the extension in its capabilities with the apps'
 * MIME type (ext-apps' getUiCapability and the check its documentation gives).
 */
function rendersApps(session: SessionContext): boolean {
  const capabilities = session.clientCapabilities as { extensions?: Record<string, { mimeTypes?: unknown }> } | undefined;
  const mimeTypes = capabilities?.extensions?.[EXTENSION_ID]?.mimeTypes;
  return Array.isArray(mimeTypes) && mimeTypes.includes(RESOURCE_MIME_TYPE);
}

type Listed = { name: string; _meta?: Record<string, unknown> };

/**
 * The `Handle` of a request's server with the views added (both eras, see surface.ts): the links in tools/list, the views
 * in resources/list and resources/read, the drawn view in a linked tool's answer, and the app-only approvePost.
 */
export function withApps(handle: Handle, services: Services, session: SessionContext): Handle {
  // A client that does not render apps gets Herald exactly as without them: no links, no views, no drawn answers.
  if (!rendersApps(session)) return handle;
  const { caller } = session;
  const appTools = APP_TOOLS.filter((tool) => canCall(caller, tool));
  const listedAppTools = appTools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input'),
    annotations: tool.annotations,
    _meta: { ui: { resourceUri: LINKS[tool.name], visibility: ['app'] } },
  }));
  const wrappers: Partial<Record<HandledMethod, (next: Handler) => Handler>> = {
    'tools/list': (next) => async (params, extra) => {
      const answer = (await next(params, extra)) as { tools: Listed[] };
      const tools = answer.tools.map((tool) => (LINKS[tool.name] ? { ...tool, _meta: { ...tool._meta, ...uiMeta(LINKS[tool.name]) } } : tool));
      return { ...answer, tools: [...tools, ...listedAppTools] };
    },
    'resources/list': (next) => async (params, extra) => {
      const answer = (await next(params, extra)) as { resources?: unknown[] };
      if (params?.cursor) return answer;
      const views = VIEWS.map((view) => ({ ...view, mimeType: RESOURCE_MIME_TYPE, _meta: VIEW_META }));
      return { ...answer, resources: [...(answer.resources ?? []), ...views] };
    },
    'resources/read': (next) => async (params, extra) => {
      const view = VIEWS.find((candidate) => candidate.uri === params?.uri);
      if (!view) return next(params, extra);
      return { contents: [{ uri: view.uri, mimeType: RESOURCE_MIME_TYPE, text: viewDocument(view.title), _meta: VIEW_META }] };
    },
    'tools/call': (next) => async (params, extra) => {
      const name = typeof params?.name === 'string' ? params.name : '';
      const args = (params?.arguments && typeof params.arguments === 'object' ? params.arguments : {}) as Record<string, unknown>;
      const appTool = appTools.find((tool) => tool.name === name);
      const result = (appTool ? await runAppTool(services, caller, appTool, args) : await next(params, extra)) as CallToolResult;
      if (!LINKS[name] || !result.structuredContent || result.isError) return result;
      try {
        const drawn = await drawView(services, caller, name, args, result.structuredContent);
        return { ...result, _meta: { ...result._meta, [VIEW_META_KEY]: { html: drawn.value } } };
      } catch (error) {
        // The answer stands without its drawing: a view that cannot be drawn is no reason to lose what the tool did.
        services.logger.warn({ err: error, tool: name }, 'MCP Apps view not drawn');
        return result;
      }
    },
  };
  return (method, handler) => handle(method, wrappers[method]?.(handler) ?? handler);
}

async function runAppTool(services: Services, caller: Caller, tool: typeof approvePostTool, args: Record<string, unknown>): Promise<CallToolResult> {
  try {
    const output = (await runTool(tool, args, caller, services, newId(), { via: 'mcp' })) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  } catch (raw) {
    return { isError: true, content: [{ type: 'text', text: toToolErrorText(asDomainError(raw)) }] };
  }
}

// ---------------------------------------------------------------------------------------------
// The drawn views

const button = (action: string, label: string, data: Record<string, string> = {}, disabled = false) =>
  html`<button type="button" data-action="${action}"${Object.entries(data).map(([key, value]) => html` data-${key}="${value}"`)}${disabled ? html` disabled` : ''}>${label}</button>`;

/** The edit form of a validatePost call: each item's text, under its channel's name. */
function editForm(args: Record<string, unknown>, preview: PostPreview): Markup {
  const posts = Array.isArray(args.socialPost) ? (args.socialPost as { postsAndComments?: { content?: unknown }[] }[]) : [];
  return html`<form class="hv-edit" hidden aria-label="Edit the texts">${posts.map((post, entry) =>
    (post.postsAndComments ?? []).map((item, position) => {
      const id = `edit-${entry}-${position}`;
      const channel = preview.entries[entry]?.channel ?? `Post ${entry + 1}`;
      return html`<label for="${id}">${channel}${(post.postsAndComments?.length ?? 0) > 1 ? `, item ${position + 1}` : ''}</label>
        <textarea id="${id}" data-entry="${entry}" data-item="${position}" rows="4">${typeof item.content === 'string' ? item.content : ''}</textarea>`;
    }),
  )}<div class="hv-actions">${button('revalidate', 'Preview the changes')}${button('cancel-edit', 'Cancel')}</div></form>`;
}

async function drawValidation(args: Record<string, unknown>, preview: PostPreview, zone: string): Promise<Markup> {
  return html`<div class="hv-view" data-tool="validatePostTool" data-arguments="${JSON.stringify(args)}">
    <p class="hv-verdict ${preview.valid ? 'hv-ok' : 'hv-error'}">${preview.valid ? 'Ready: every channel accepts this post.' : html`Not ready: ${preview.errors ?? 'fix what is marked below.'}`}</p>
    ${preview.entries.map((entry) => platformPreview(entry, { zone }))}
    <div class="hv-actions">${button('schedule', 'Schedule', {}, !preview.valid)}${button('edit', 'Edit')}</div>
    ${editForm(args, preview)}</div>`;
}

/** Posts as they are stored (after schedulePostTool or a decision): drawn, with their state and, when allowed, Approve. */
async function drawStored(services: Services, caller: Caller, ids: string[], zone: string, notice: string): Promise<Markup> {
  const em = services.orm.em.fork();
  const approver = hasScope(caller, 'approve');
  const views = await Promise.all(ids.map((id) => postView(em, caller.organizationId, id)));
  return html`<div class="hv-view" data-tool="stored"><p class="hv-verdict hv-ok">${notice}</p>${views.map((view) => {
    const waiting = view.root.state === 'AWAITING_APPROVAL';
    const date = view.root.publishDate ? formatWhen(view.root.publishDate, zone) : '';
    return html`<div class="hv-post">${platformPreview(storedEntry(view.preview, view.integration), { zone, dated: false })}
      <p class="hv-state">${waiting ? `Waiting for an owner's approval, then published ${date}` : view.root.state === 'DRAFT' ? 'A draft: not published until scheduled' : `Scheduled for ${date}`}</p>
      ${waiting && approver ? html`<div class="hv-actions">${button('approve', `Approve the post on ${view.integration.name}`, { post: view.root.id })}</div>` : ''}</div>`;
  })}</div>`;
}

type ListedPost = { id: string; state: string; content?: string; publishDate?: string; date?: string; integration?: { id: string; name: string } };
const STATES: Record<string, string> = { QUEUE: 'Scheduled', AWAITING_APPROVAL: 'Waiting for approval', DRAFT: 'Draft', PUBLISHED: 'Published', ERROR: 'Failed' };
const DAY_MS = 86_400_000;

/** postsListTool's answer as a week: each day of the range in the organization's zone, its posts at their local times. */
function drawWeek(args: Record<string, unknown>, posts: ListedPost[], zone: string, approver: boolean): Markup {
  const start = new Date(typeof args.startDate === 'string' ? args.startDate : Date.now());
  const end = new Date(typeof args.endDate === 'string' ? args.endDate : start.getTime() + 7 * DAY_MS);
  const span = Math.max(DAY_MS, end.getTime() - start.getTime());
  const dayOf = (instant: string | Date) => formatWhen(instant, zone).slice(0, 10);
  const heading = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'long', day: 'numeric', month: 'long' });
  const days: { key: string; label: string }[] = [];
  for (let at = start.getTime(); at < end.getTime() && days.length < 100; at += DAY_MS) {
    const key = dayOf(new Date(at));
    if (!days.some((day) => day.key === key)) days.push({ key, label: heading.format(new Date(at)) });
  }
  const shift = (direction: number) => ({ start: new Date(start.getTime() + direction * span).toISOString(), end: new Date(end.getTime() + direction * span).toISOString() });
  return html`<div class="hv-view" data-tool="postsListTool">
    <p class="hv-zone">Times in ${zone}.</p>
    <div class="hv-actions">${button('week', 'Previous week', shift(-1))}${button('week', 'Next week', shift(1))}</div>
    ${days.map((day) => {
      const today = posts.filter((post) => dayOf(post.publishDate ?? post.date ?? '') === day.key);
      return html`<section class="hv-day" aria-label="${day.label}"><h2>${day.label}</h2>${
        today.length
          ? html`<ul>${today.map((post) => {
              const when = formatWhen(post.publishDate ?? post.date ?? '', zone);
              return html`<li><time datetime="${post.publishDate ?? post.date ?? ''}">${when.slice(11)}</time> <strong><bdi>${post.integration?.name ?? ''}</bdi></strong> <span class="hv-badge">${STATES[post.state] ?? post.state}</span>
                <span class="hv-excerpt" dir="auto">${excerpt(post.content ?? '', 140)}</span>
                ${post.state === 'AWAITING_APPROVAL' && approver ? html`<span class="hv-actions">${button('approve', `Approve the post on ${post.integration?.name ?? 'its channel'}`, { post: post.id })}</span>` : ''}</li>`;
            })}</ul>`
          : html`<p class="hv-none">Nothing scheduled.</p>`
      }</section>`;
    })}</div>`;
}

async function drawView(services: Services, caller: Caller, tool: string, args: Record<string, unknown>, output: Record<string, unknown>): Promise<Markup> {
  const zone = await organizationZone(services.orm.em.fork(), caller.organizationId);
  if (tool === 'validatePostTool') return drawValidation(args, output as unknown as PostPreview, zone);
  if (tool === 'postsListTool') return drawWeek(args, (output.posts ?? []) as ListedPost[], zone, hasScope(caller, 'approve'));
  if (tool === 'schedulePostTool') {
    const created = output.output;
    if (!Array.isArray(created)) return html`<div class="hv-view"><p class="hv-verdict hv-error">Not scheduled: ${String((created as { errors?: string })?.errors ?? '')}</p></div>`;
    return drawStored(services, caller, created.map((post: { postId: string }) => post.postId), zone, created.length === 1 ? 'Scheduled.' : `${created.length} posts scheduled.`);
  }
  return drawStored(services, caller, [String(output.id)], zone, 'Approved.');
}

// ---------------------------------------------------------------------------------------------
// The views' document: one shell, one script

const VIEW_STYLE = `
:root{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1b1f24;background:#fff}
body{margin:0;padding:12px}h1{font-size:1.1rem;margin:0 0 8px}h2{font-size:1rem;margin:12px 0 4px}
.hv-actions{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0}
button{font:inherit;padding:6px 14px;border-radius:6px;border:1px solid #0b5cad;background:#0b5cad;color:#fff;cursor:pointer}
button[data-action=edit],button[data-action=cancel-edit],button[data-action=week]{background:#fff;color:#0b5cad}
button:disabled{background:#59636e;border-color:#59636e;color:#fff;cursor:not-allowed}
button:focus-visible,textarea:focus-visible{outline:3px solid #f0b400;outline-offset:2px}
.hv-verdict{padding:6px 10px;border-radius:6px}.hv-ok{background:#dafbe1;color:#0f5323}.hv-error{background:#ffebe9;color:#8a1c13}
.hv-edit{display:flex;flex-direction:column;gap:4px}.hv-edit textarea{font:inherit;width:100%}
.hv-day ul{list-style:none;padding:0;margin:0}.hv-day li{padding:4px 0;border-bottom:1px solid #d1d9e0}
.hv-badge{font-size:.8rem;background:#eef1f4;border-radius:999px;padding:0 6px}.hv-none,.hv-zone,.hv-state{color:#59636e}
.hv-excerpt{display:block;white-space:pre-wrap;overflow-wrap:anywhere}
#status:empty{display:none}
`;

// The bridge's JSON-RPC over postMessage (ext-apps' protocol 2026-01-26), from the view's side: initialize, take the tool's
// answer, call tools for the buttons, report the size. Only messages from the host (window.parent) are read.
const VIEW_SCRIPT = `(() => {
  const content = document.getElementById('content');
  const status = document.getElementById('status');
  const pending = new Map();
  let next = 1;
  const key = 'herald-app-' + crypto.randomUUID();
  const send = (message) => window.parent.postMessage(Object.assign({ jsonrpc: '2.0' }, message), '*');
  const request = (method, params) => new Promise((resolve, reject) => { const id = next++; pending.set(id, { resolve, reject }); send({ id, method, params }); });
  const say = (text) => { status.textContent = text; };
  function show(result) {
    const view = result && result._meta && result._meta[${JSON.stringify(VIEW_META_KEY)}];
    if (view && typeof view.html === 'string') { content.innerHTML = view.html; return; }
    const text = ((result && result.content) || []).filter((part) => part.type === 'text').map((part) => part.text).join('\\n');
    content.textContent = '';
    const block = document.createElement('pre');
    block.textContent = text || 'No answer to show.';
    content.append(block);
  }
  async function call(name, args, doing) {
    for (const element of content.querySelectorAll('button')) element.disabled = true;
    say(doing);
    try {
      const result = await request('tools/call', { name, arguments: args });
      show(result);
      say(result.isError ? 'The call was refused: see the answer above.' : '');
    } catch (error) {
      say('The call failed: ' + error.message);
      for (const element of content.querySelectorAll('button')) element.disabled = false;
    }
  }
  const argumentsOf = () => JSON.parse(content.querySelector('.hv-view').dataset.arguments || '{}');
  content.addEventListener('click', (event) => {
    const target = event.target.closest('button[data-action]');
    if (!target) return;
    const action = target.dataset.action;
    const form = content.querySelector('.hv-edit');
    if (action === 'schedule') call('schedulePostTool', Object.assign({ idempotencyKey: key }, argumentsOf()), 'Scheduling…');
    else if (action === 'edit') { form.hidden = false; form.querySelector('textarea').focus(); }
    else if (action === 'cancel-edit') form.hidden = true;
    else if (action === 'revalidate') {
      const args = argumentsOf();
      for (const area of form.querySelectorAll('textarea')) args.socialPost[Number(area.dataset.entry)].postsAndComments[Number(area.dataset.item)].content = area.value;
      call('validatePostTool', args, 'Checking the changes…');
    } else if (action === 'approve') call('approvePost', { id: target.dataset.post }, 'Approving…');
    else if (action === 'week') call('postsListTool', { startDate: target.dataset.start, endDate: target.dataset.end }, 'Loading the week…');
  });
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined && message.id !== undefined) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message)); else waiting.resolve(message.result);
      return;
    }
    if (message.method === 'ui/notifications/tool-result') show(message.params);
    else if (message.method === 'ui/notifications/tool-cancelled') say('The call was cancelled.');
    else if (message.id !== undefined) send({ id: message.id, result: {} });
  });
  const size = () => send({ method: 'ui/notifications/size-changed', params: { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight } });
  new ResizeObserver(size).observe(document.body);
  request('ui/initialize', { appInfo: { name: 'Herald', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '2026-01-26' })
    .then(() => send({ method: 'ui/notifications/initialized', params: {} }))
    .catch((error) => say('The host did not start the view: ' + error.message));
})();`;

/** The HTML document of a view: its stylesheets and script inline (the host's CSP allows nothing else). */
function viewDocument(title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<style>${VIEW_STYLE}${PLATFORM_PREVIEW_STYLE}</style></head>
<body><main><h1>${title}</h1><div id="content" aria-live="polite"><p>Waiting for Herald's answer…</p></div><p id="status" role="status"></p></main>
<script>${VIEW_SCRIPT}</script></body></html>`;
}
