// Customer preview links over real HTTP (issue 35): made over REST (approve scope), opened without any cookie, showing
// exactly the chosen channels' upcoming posts in the range; comment, approve (only with the power, only a waiting post,
// through the approval gate) and ask for changes, each in the audit trail under the link's name and in a notification;
// a revoked or expired link answers 410 and does nothing; a tampered token 404; forms without the link's form token are
// refused; the text of posts and comments is escaped; media come through the link, never a storage path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTwoBlueskyChannels, type TwoChannels } from './helpers/two-bluesky-channels.js';
import type { Herald } from './helpers/harness.js';
import { uploaded } from './helpers/media-samples.js';
import { tinyPng } from './helpers/provider-context.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { restCall } from './helpers/harness.js';
import { setPreferredCustomer } from '../tools/internal/channel-settings.js';
import { PreviewLinkSchema } from '../src/db/preview-link-entities.js';
import { postRef } from '../tools/internal/preview-link-actions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

let setup: TwoChannels;
let herald: Herald;
let alice: string;
let bob: string;
let otherFake: BlueskyFake;
let agentKey: string;
let approverKey: string;

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.now() + days * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
let counter = 0;
const unique = (label: string) => `${label} ${Date.now()} ${counter++}`;

async function create(channel: string, content: string, options: { days?: number; key?: string; type?: string; image?: { id: string; path: string }[] } = {}): Promise<string> {
  const created = await herald.rest(
    'POST',
    '/posts',
    { type: options.type ?? 'schedule', date: at(options.days ?? 2), shortLink: false, tags: [], posts: [{ integration: { id: channel }, value: [{ content, image: options.image ?? [] }], settings: {} }] },
    options.key ? { authorization: options.key } : {},
  );
  expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
  return created.body[0].postId;
}

async function makeLink(body: Record<string, unknown>): Promise<{ id: string; url: string; token: string }> {
  const made = await herald.rest('POST', '/preview-links', { name: 'Acme Bakery', from: at(0), to: at(7), expiresAt: at(3), ...body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { id: made.body.id, url: made.body.url, token: made.body.url.slice(made.body.url.lastIndexOf('/') + 1) };
}

/** A browser without any cookie. */
async function open(path: string, init: RequestInit = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${herald.url}${path}`, { redirect: 'manual', ...init });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

const formOf = (page: string) => /name="_form" value="([^"]+)"/.exec(page)?.[1] ?? '';
const refsOf = (page: string) => [...page.matchAll(/id="post-([\w-]+)"/g)].map((match) => match[1]);

async function act(token: string, ref: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const page = await open(`/preview/${token}`);
  return open(`/preview/${token}/posts/${ref}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ _form: formOf(page.text), ...fields }).toString(),
  });
}

async function postState(id: string): Promise<any> {
  const listed = await herald.rest('GET', `/posts?startDate=${encodeURIComponent(at(-1))}&endDate=${encodeURIComponent(at(30))}`);
  return listed.body.posts.find((post: any) => post.id === id);
}

const audit = async (postId: string) => (await herald.rest('GET', `/audit?targetKind=post&targetId=${postId}`)).body.events as any[];
const activity = async (id: string) => (await herald.rest('GET', `/preview-links/${id}/activity`)).body.activity as any[];

/** The reference a link's page gives a post (as the server makes it), for posts the page must not show. */
async function refFor(linkId: string, postId: string): Promise<string> {
  const link = await herald.services.orm.em.fork().findOneOrFail(PreviewLinkSchema, { id: linkId });
  return postRef(herald.services, link, postId);
}

beforeAll(async () => {
  setup = await startWithTwoBlueskyChannels('preview-links-test');
  ({ herald, aliceChannel: alice, bobChannel: bob } = setup);
  otherFake = await startBlueskyFake({ handle: 'other.bsky.social' });
  // Agents' posts wait for approval; the agent key and a key with the approve scope (not an owner key).
  expect((await herald.rest('PUT', '/approval-settings', { agents: true })).status).toBe(200);
  agentKey = (await herald.rest('POST', '/keys', { name: 'Agent' })).body.secret;
  approverKey = (await herald.rest('POST', '/keys', { name: 'Approver', scopes: ['read', 'approve'] })).body.secret;
});

afterAll(async () => {
  await setup?.stop();
  await otherFake?.close();
});

describe('Making preview links (REST, approve scope)', () => {
  it('answers the URL once, lists the link without it, and refuses what makes no sense', async () => {
    const link = await makeLink({ channels: [alice] });
    expect(link.url).toMatch(new RegExp(`^${herald.url}/preview/hpl_[A-Za-z0-9_-]{43}$`));
    const listed = await herald.rest('GET', '/preview-links', undefined, { authorization: approverKey });
    expect(listed.status).toBe(200);
    const record = listed.body.find((item: any) => item.id === link.id);
    expect(record).toMatchObject({ name: 'Acme Bakery', channels: [alice], customer: null, canApprove: false, state: 'active', lastUsedAt: null });
    expect(JSON.stringify(listed.body)).not.toContain(link.token);
    // The token is kept only as its hash.
    const row = await herald.services.orm.em.fork().findOneOrFail(PreviewLinkSchema, { id: link.id });
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(link.token);

    const both = await herald.rest('POST', '/preview-links', { name: 'x', channels: [alice], customer: 'c', from: at(0), to: at(7), expiresAt: at(3) });
    expect(both.status).toBe(400);
    expect(both.body.message).toMatch(/either channels or a customer/);
    const past = await herald.rest('POST', '/preview-links', { name: 'x', channels: [alice], from: at(0), to: at(7), expiresAt: at(-1) });
    expect(past.status).toBe(400);
    const tooLong = await herald.rest('POST', '/preview-links', { name: 'x', channels: [alice], from: at(0), to: at(7), expiresAt: at(200) });
    expect(tooLong.status).toBe(400);
    const unknown = await herald.rest('POST', '/preview-links', { name: 'x', channels: ['nope'], from: at(0), to: at(7), expiresAt: at(3) });
    expect(unknown.status).toBe(400);
    // An agent key (read + posts:write) may not make one.
    const agent = await herald.rest('POST', '/preview-links', { name: 'x', channels: [alice], from: at(0), to: at(7), expiresAt: at(3) }, { authorization: agentKey });
    expect(agent.status).toBe(403);
    expect(agent.body.details).toEqual({ requiredScope: 'approve' });
  });
});

describe('The preview page', () => {
  it('opens without any cookie and shows exactly the chosen channels\' upcoming posts in its range, as the platform shows them', async () => {
    const inRange = unique('Fresh croissants');
    const waiting = unique('Waiting sourdough');
    const later = unique('Out of range');
    const bobs = unique('Bob only');
    const draft = unique('Just a draft');
    const inRangeId = await create(alice, `<p>${inRange}</p>`);
    await create(alice, waiting, { key: agentKey });
    await create(alice, later, { days: 20 });
    const bobId = await create(bob, bobs);
    await create(alice, draft, { type: 'draft' });
    const other = await herald.newOrganization('Other');
    const otherChannel = (await restCall(herald.restUrl, other.apiKey, 'POST', '/integrations/bluesky/connect', { service: otherFake.url, identifier: otherFake.handle, appPassword: otherFake.password })).body.id;
    const otherPost = (await restCall(herald.restUrl, other.apiKey, 'POST', '/posts', { type: 'schedule', date: at(2), shortLink: false, tags: [], posts: [{ integration: { id: otherChannel }, value: [{ content: 'other org', image: [] }], settings: {} }] })).body[0].postId;

    const link = await makeLink({ channels: [alice], from: at(0), to: at(7) });
    const page = await open(`/preview/${link.token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-robots-tag')).toMatch(/noindex/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    // The text as Bluesky receives it (plain text), not the HTML.
    expect(page.text).not.toContain(`&lt;p&gt;${inRange}`);
    expect(page.text).toContain(inRange);
    expect(page.text).toContain(waiting);
    expect(page.text).toContain('Waiting for approval');
    for (const hidden of [later, bobs, draft, 'other org']) expect(page.text).not.toContain(hidden);
    expect(refsOf(page.text)).toHaveLength(2);
    // No id that works elsewhere: neither post ids nor the link's id are on the page.
    expect(page.text).not.toContain(inRangeId);
    expect(page.text).not.toContain(link.id);
    expect(page.text).not.toContain(alice);

    // Another channel's post and another organization's, by id or by a reference made for them: 404, nothing done.
    for (const ref of [bobId, otherPost, await refFor(link.id, bobId), await refFor(link.id, otherPost)]) {
      const answer = await act(link.token, ref, { act: 'comment', message: 'hello' });
      expect(answer.status, ref).toBe(404);
      expect(answer.text).toContain('This post is not on this preview link.');
      expect((await open(`/preview/${link.token}/media/${ref}/0/0`)).status).toBe(404);
    }
    expect(await activity(link.id)).toEqual([]);
    // The link's last use is recorded.
    const listed = (await herald.rest('GET', '/preview-links')).body.find((item: any) => item.id === link.id);
    expect(listed.lastUsedAt).not.toBeNull();
  });

  it('serves a post\'s library media through the link, never a storage path', async () => {
    const file = await uploaded(herald, tinyPng(), 'cake.png');
    const text = unique('With a picture');
    await create(alice, text, { image: [file] });
    const link = await makeLink({ channels: [alice] });
    const page = await open(`/preview/${link.token}`);
    expect(page.text).not.toContain('/uploads/');
    expect(page.text).not.toContain(file.id);
    const source = new RegExp(`src="${herald.url}(/preview/${link.token}/media/[^"]+)"`).exec(page.text)?.[1];
    expect(source).toBeDefined();
    const image = await fetch(`${herald.url}${source}`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await image.arrayBuffer()).equals(tinyPng())).toBe(true);
    // Another index of the same post is no file of it.
    expect((await open(source!.replace(/\/0$/, '/5'))).status).toBe(404);
  });
});

describe('Acting through a link', () => {
  it('comments: kept on the post, in the audit trail under the link\'s name, and in a notification', async () => {
    const postId = await create(alice, unique('Comment on me'));
    const link = await makeLink({ channels: [alice], name: 'Acme comments' });
    const target = await refFor(link.id, postId);
    expect(refsOf((await open(`/preview/${link.token}`)).text)).toContain(target);
    const answer = await act(link.token, target, { act: 'comment', message: 'Lovely, but say "fresh"' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/preview/${link.token}?done=comment`);
    const [item] = await activity(link.id);
    expect(item).toMatchObject({ postId, kind: 'comment', text: 'Lovely, but say "fresh"', outcome: null });
    const event = (await audit(postId)).find((entry) => entry.action === 'post.preview_commented');
    expect(event).toMatchObject({ actor: { kind: 'preview_link', id: link.id, name: 'The preview link "Acme comments"' }, via: 'preview_link' });
    // The trail names the act and the link; the words are kept with the post, not in the trail.
    expect(event.summary).toBe(`The preview link "Acme comments" commented on post ${postId}.`);
    expect(event.changes).toMatchObject({ previewLink: link.id, feedback: item.id });
    const notifications = (await herald.rest('GET', '/notifications')).body.notifications;
    expect(notifications.some((entry: any) => entry.type === 'preview_feedback' && entry.content.includes(postId))).toBe(true);
    // The page shows what was said, escaped.
    expect((await open(`/preview/${link.token}?done=comment`)).text).toContain('Lovely, but say &quot;fresh&quot;');
    // An empty comment is refused with a clear page.
    const empty = await act(link.token, target, { act: 'comment', message: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Write a message first.');
  });

  it('approves only with the power, only a post waiting for approval, through the approval gate', async () => {
    const waitingId = await create(alice, unique('Approve me'), { key: agentKey });
    const scheduledId = await create(alice, unique('Already scheduled'));
    expect((await postState(waitingId)).state).toBe('AWAITING_APPROVAL');
    const weak = await makeLink({ channels: [alice], name: 'No power' });
    const refused = await act(weak.token, await refFor(weak.id, waitingId), { act: 'approve' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('This preview link cannot approve posts.');
    expect((await open(`/preview/${weak.token}`)).text).not.toContain('value="approve"');
    expect((await postState(waitingId)).state).toBe('AWAITING_APPROVAL');

    const strong = await makeLink({ channels: [alice], name: 'Acme approves', canApprove: true });
    expect((await act(strong.token, await refFor(strong.id, scheduledId), { act: 'approve' })).status).toBe(409);
    const approved = await act(strong.token, await refFor(strong.id, waitingId), { act: 'approve' });
    expect(approved.status).toBe(303);
    const post = await postState(waitingId);
    expect(post.state).toBe('QUEUE');
    expect(post.approval).toMatchObject({ decision: 'approved', decidedBy: `preview_link:${strong.id}`, decidedByName: 'The preview link "Acme approves"' });
    const event = (await audit(waitingId)).find((entry) => entry.action === 'post.approved');
    expect(event).toMatchObject({ actor: { kind: 'preview_link', id: strong.id }, via: 'preview_link' });
    expect((await activity(strong.id))[0]).toMatchObject({ postId: waitingId, kind: 'approved' });
    const notifications = (await herald.rest('GET', '/notifications')).body.notifications;
    expect(notifications.some((entry: any) => entry.type === 'post_approved' && entry.content.startsWith('The preview link "Acme approves" approved'))).toBe(true);
    // Approved twice: it no longer waits.
    expect((await act(strong.token, await refFor(strong.id, waitingId), { act: 'approve' })).status).toBe(409);
  });

  it('asks for changes: a waiting post goes back to draft with the message (with the power); a scheduled one keeps its date and gets a visible comment', async () => {
    const waitingId = await create(alice, unique('Change me'), { key: agentKey });
    const scheduledId = await create(alice, unique('Scheduled, change me'));
    const link = await makeLink({ channels: [alice], name: 'Acme changes', canApprove: true });
    const sent = await act(link.token, await refFor(link.id, waitingId), { act: 'changes', message: 'Use the new logo' });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toContain('done=draft');
    const post = await postState(waitingId);
    expect(post.state).toBe('DRAFT');
    expect(post.approval).toMatchObject({ decision: 'rejected', reason: 'Use the new logo', decidedBy: `preview_link:${link.id}` });
    expect((await audit(waitingId)).find((entry) => entry.action === 'post.rejected')).toMatchObject({ actor: { kind: 'preview_link', id: link.id } });

    const onScheduled = await act(link.token, await refFor(link.id, scheduledId), { act: 'changes', message: 'Post it an hour later' });
    expect(onScheduled.status).toBe(303);
    expect((await postState(scheduledId)).state).toBe('QUEUE');
    expect((await activity(link.id))[0]).toMatchObject({ postId: scheduledId, kind: 'changes_requested', text: 'Post it an hour later', outcome: 'comment' });
    expect((await audit(scheduledId)).find((entry) => entry.action === 'post.preview_changes_requested')).toMatchObject({ actor: { kind: 'preview_link', id: link.id } });
    // A request for changes needs its message.
    expect((await act(link.token, await refFor(link.id, scheduledId), { act: 'changes', message: '' })).status).toBe(400);
  });

  it('refuses a form without the link\'s form token, with a wrong one, or from another site, and does nothing', async () => {
    const postId = await create(alice, unique('CSRF target'));
    const link = await makeLink({ channels: [alice] });
    const ref = await refFor(link.id, postId);
    const post = (body: string, headers: Record<string, string> = {}) =>
      open(`/preview/${link.token}/posts/${ref}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    expect((await post('act=comment&message=forged')).status).toBe(403);
    expect((await post('act=comment&message=forged&_form=wrong')).status).toBe(403);
    const page = await open(`/preview/${link.token}`);
    const good = `act=comment&message=forged&_form=${encodeURIComponent(formOf(page.text))}`;
    expect((await post(good, { origin: 'https://evil.example' })).status).toBe(403);
    // Another link's form token does not open this one.
    const other = await makeLink({ channels: [alice] });
    const otherForm = formOf((await open(`/preview/${other.token}`)).text);
    expect((await post(`act=comment&message=forged&_form=${encodeURIComponent(otherForm)}`)).status).toBe(403);
    expect(await activity(link.id)).toEqual([]);
    expect((await post(good)).status).toBe(303);
  });

  it('shows post text and comments of an injection corpus escaped', async () => {
    const corpus = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', "'><svg onload=alert(3)>", '<a href="javascript:alert(4)">x</a>', '{{constructor.constructor("alert(5)")()}}'];
    const postId = await create(alice, `&lt;script&gt;alert(0)&lt;/script&gt; ${corpus[1]} ${corpus[2]}`);
    const link = await makeLink({ channels: [alice], name: '<b>Acme</b> "quoted"' });
    const ref = await refFor(link.id, postId);
    for (const text of corpus) expect((await act(link.token, ref, { act: 'comment', message: text })).status).toBe(303);
    const page = (await open(`/preview/${link.token}`)).text;
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img[^>]*onerror/i);
    expect(page).not.toMatch(/<svg/i);
    expect(page).not.toContain('href="javascript:');
    expect(page).not.toContain('<b>Acme</b>');
    expect(page).toContain('&lt;b&gt;Acme&lt;/b&gt; &quot;quoted&quot;');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
  });
});

describe('A link that is over', () => {
  it('answers 410 with a clear page after it was revoked, and does nothing', async () => {
    const postId = await create(alice, unique('Revoked view'));
    const link = await makeLink({ channels: [alice] });
    const page = await open(`/preview/${link.token}`);
    const ref = await refFor(link.id, postId);
    const revoked = await herald.rest('DELETE', `/preview-links/${link.id}`, undefined, { authorization: approverKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ state: 'revoked' });
    const after = await open(`/preview/${link.token}`);
    expect(after.status).toBe(410);
    expect(after.text).toContain('This preview link was revoked.');
    expect(after.text).not.toContain('Revoked view');
    expect(after.headers.get('referrer-policy')).toBe('no-referrer');
    const posted = await open(`/preview/${link.token}/posts/${ref}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _form: formOf(page.text), act: 'comment', message: 'too late' }).toString(),
    });
    expect(posted.status).toBe(410);
    expect(await activity(link.id)).toEqual([]);
    expect((await audit(postId)).some((entry) => entry.action.startsWith('post.preview'))).toBe(false);
    expect((await herald.rest('GET', `/audit?targetKind=preview_link&targetId=${link.id}`)).body.events.map((entry: any) => entry.action)).toEqual(['preview_link.revoked', 'preview_link.created']);
  });

  it('answers 410 after it expired, and does nothing', async () => {
    const postId = await create(alice, unique('Expired view'));
    const link = await makeLink({ channels: [alice], expiresAt: at(1) });
    const page = await open(`/preview/${link.token}`);
    expect(page.status).toBe(200);
    herald.setNow(new Date(Date.now() + 1.5 * DAY));
    try {
      const after = await open(`/preview/${link.token}`);
      expect(after.status).toBe(410);
      expect(after.text).toContain('This preview link has expired.');
      const posted = await act(link.token, await refFor(link.id, postId), { act: 'comment', message: 'late' });
      expect(posted.status).toBe(410);
      expect((await herald.rest('GET', '/preview-links')).body.find((item: any) => item.id === link.id).state).toBe('expired');
    } finally {
      herald.setNow(undefined);
    }
    expect(await activity(link.id)).toEqual([]);
  });

  it('answers 404 for a tampered or made-up token', async () => {
    const link = await makeLink({ channels: [alice] });
    const last = link.token.at(-1) === 'A' ? 'B' : 'A';
    for (const token of [`${link.token.slice(0, -1)}${last}`, link.token.slice(0, -1), 'hpl_' + 'A'.repeat(43), 'nothing', link.id]) {
      const answer = await open(`/preview/${token}`);
      expect(answer.status, token).toBe(404);
      expect(answer.text).toContain('This preview link does not exist.');
    }
  });
});

describe('Over MCP (previewLinkTool, approve scope)', () => {
  const mcpClient = async (key: string) => {
    const client = new Client({ name: 'preview-links-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    return client;
  };

  it('makes, lists, reports on and revokes a link with the same checks and answers as REST; an agent key is not offered it', async () => {
    const agent = await mcpClient(agentKey);
    const approver = await mcpClient(approverKey);
    try {
      expect((await agent.listTools()).tools.map((tool) => tool.name)).not.toContain('previewLinkTool');
      const call = async (args: Record<string, unknown>) => (await approver.callTool({ name: 'previewLinkTool', arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text: string }[] };
      const text = unique('Seen over MCP');
      const postId = await create(alice, text);
      const made = await call({ action: 'create', link: { name: 'Acme over MCP', channels: [alice], from: at(0), to: at(7), expiresAt: at(3) } });
      expect(made.isError, made.content[0]?.text).toBeFalsy();
      const { id, url } = made.structuredContent.link;
      expect(url).toMatch(/\/preview\/hpl_/);
      const token = url.slice(url.lastIndexOf('/') + 1);
      expect((await open(`/preview/${token}`)).text).toContain(text);
      // The same refusals as REST, named by field.
      const bad = await call({ action: 'create', link: { name: 'x', channels: [alice], from: at(0), to: at(7), expiresAt: at(-1) } });
      expect(bad.isError).toBe(true);
      const missing = await call({ action: 'create', link: { channels: [alice] } });
      expect(missing.isError).toBe(true);
      expect(missing.content[0].text).toContain('name');
      expect((await call({ action: 'revoke' })).content[0].text).toContain('revoke needs the preview link\'s id');

      const listed = await call({ action: 'list' });
      expect(listed.structuredContent.links.find((link: any) => link.id === id)).toMatchObject({ name: 'Acme over MCP', state: 'active' });
      expect(JSON.stringify(listed.structuredContent)).not.toContain(token);
      expect((await act(token, await refFor(id, postId), { act: 'comment', message: 'Looks good' })).status).toBeLessThan(400);
      const report = await call({ action: 'activity', id });
      expect(report.structuredContent.activity).toMatchObject([{ postId, kind: 'comment', text: 'Looks good' }]);
      const revoked = await call({ action: 'revoke', id });
      expect(revoked.structuredContent.link.state).toBe('revoked');
      expect((await open(`/preview/${token}`)).status).toBe(410);
      expect((await herald.rest('GET', `/audit?targetKind=preview_link&targetId=${id}`)).body.events.map((entry: any) => entry.action)).toEqual(['preview_link.revoked', 'preview_link.created']);
    } finally {
      await agent.close();
      await approver.close();
    }
  });
});

describe('A customer\'s link', () => {
  it('shows every channel of the customer, including one added after the link was made', async () => {
    const em = herald.services.orm.em.fork();
    const customer = (await setPreferredCustomer(em, herald.organizationId, bob, { newName: 'Bob & Co' }, new Date())).customerId!;
    const bobText = unique('Bob customer post');
    const aliceText = unique('Alice customer post');
    await create(bob, bobText);
    await create(alice, aliceText);
    const link = await makeLink({ customer });
    expect((await herald.rest('GET', '/preview-links')).body.find((item: any) => item.id === link.id).customer).toEqual({ id: customer, name: 'Bob & Co' });
    let page = (await open(`/preview/${link.token}`)).text;
    expect(page).toContain(bobText);
    expect(page).not.toContain(aliceText);
    await setPreferredCustomer(em, herald.organizationId, alice, { customerId: customer }, new Date());
    page = (await open(`/preview/${link.token}`)).text;
    expect(page).toContain(aliceText);
    await setPreferredCustomer(em, herald.organizationId, alice, {}, new Date());
  });
});

describe('Rate limit', () => {
  it('answers 429 with Retry-After once an address sends too many requests to preview pages', async () => {
    let last: { status: number; headers: Headers } | undefined;
    let index = 0;
    for (; index < 125 && last?.status !== 429; index++) last = await open(`/preview/hpl_${'B'.repeat(43)}`);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
