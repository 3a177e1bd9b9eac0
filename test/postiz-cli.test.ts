// A session of the real `postiz` CLI (npm postiz 2.1.0) against Herald, with no flag a Postiz user would not pass: every
// command, the device login included.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { connectOAuthChannel } from './helpers/oauth-channel.js';
import { publishUntilSettled } from './helpers/posts.js';
import { tinyPng } from './helpers/provider-context.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startPinterestFake, type PinterestFake } from './fakes/pinterest.js';
import { PostSchema } from '../src/db/entities.js';
import { repositoryRoot } from './helpers/herald-process.js';

const run = promisify(execFile);
const CLI = path.join(repositoryRoot, 'node_modules/postiz/dist/index.js');

let herald: Herald;
let bluesky: BlueskyFake;
let pinterest: PinterestFake;
let home: string;
let blueskyChannel: string;
let pinterestChannel: string;

beforeAll(async () => {
  [bluesky, pinterest] = await Promise.all([startBlueskyFake(), startPinterestFake()]);
  herald = await startHerald(
    {
      DEVICE_POLL_INTERVAL_SECONDS: '1',
      PINTEREST_CLIENT_ID: pinterest.authority.clientId,
      PINTEREST_CLIENT_SECRET: pinterest.authority.clientSecret,
      SOCIAL_ENDPOINTS: JSON.stringify({ pinterest: pinterest.endpoints }),
    },
    { guard: { allowLoopback: true } },
  );
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
  blueskyChannel = connected.body.id;
  pinterestChannel = (await connectOAuthChannel(herald, 'pinterest')).integrationId;
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'postiz-home-'));
});

afterAll(async () => {
  await herald?.stop();
  await Promise.all([bluesky?.close(), pinterest?.close()]);
  fs.rmSync(home, { recursive: true, force: true });
});

/** Runs `postiz <args>` as a user would, with the API key from the environment; answers its output. */
async function postiz(args: string[], env: Record<string, string> = { POSTIZ_API_KEY: herald.apiKey, POSTIZ_API_URL: `${herald.url}/api` }) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, HOME: home, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The JSON the CLI prints after its message lines. */
const printed = (stdout: string) => JSON.parse(stdout.slice(stdout.search(/^[[{]/m)));

describe('the postiz CLI with an API key', () => {
  it('lists integrations, reads settings, runs a helper, uploads, creates (shortLink on by default), lists, reads analytics, links a missing release and deletes', async () => {
    const integrations = await postiz(['integrations:list']);
    expect(integrations.code, integrations.stdout + integrations.stderr).toBe(0);
    expect(printed(integrations.stdout).map((item: { id: string }) => item.id).sort()).toEqual([blueskyChannel, pinterestChannel].sort());

    const settings = await postiz(['integrations:settings', pinterestChannel]);
    expect(settings.code, settings.stdout + settings.stderr).toBe(0);
    expect(printed(settings.stdout).output.tools.map((tool: { methodName: string }) => tool.methodName)).toContain('getBoards');

    const trigger = await postiz(['integrations:trigger', pinterestChannel, 'getBoards']);
    expect(trigger.code, trigger.stdout + trigger.stderr).toBe(0);
    expect(printed(trigger.stdout).output[0].id).toBe(pinterest.boards[0].id);

    const picture = path.join(home, 'picture.png');
    fs.writeFileSync(picture, tinyPng());
    const uploaded = await postiz(['upload', picture]);
    expect(uploaded.code, uploaded.stdout + uploaded.stderr).toBe(0);
    const media = printed(uploaded.stdout) as { id: string; path: string };
    expect(media.path).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\//);

    const date = new Date(Date.now() + 3600_000).toISOString();
    const created = await postiz(['posts:create', '-c', 'Hello from the CLI https://example.com', '-m', media.path, '-c', 'A reply', '-s', date, '-i', blueskyChannel]);
    expect(created.code, `${created.stdout}\n${created.stderr}`).toBe(0);
    const [entry] = printed(created.stdout) as { postId: string; integration: string; warnings?: string[] }[];
    expect(entry.integration).toBe(blueskyChannel);
    expect(entry.warnings ?? []).not.toContainEqual(expect.stringMatching(/not configured/));

    const listed = await postiz(['posts:list']);
    expect(listed.code, listed.stdout + listed.stderr).toBe(0);
    expect(printed(listed.stdout).posts.map((post: { id: string }) => post.id)).toContain(entry.postId);

    // Publish it, then read analytics of the channel and the post.
    herald.setNow(new Date(Date.now() + 3700_000));
    expect((await publishUntilSettled(herald, entry.postId)).outcome.kind).toBe('published');
    herald.setNow(undefined);
    // The CLI's default shortLink: true: the link went out as one of Herald's short links.
    expect(String(bluesky.records.at(-2)?.record.text)).toMatch(new RegExp(`^Hello from the CLI ${herald.url}/l/\\w+$`));
    const channelAnalytics = await postiz(['analytics:platform', blueskyChannel]);
    expect(channelAnalytics.code, channelAnalytics.stdout + channelAnalytics.stderr).toBe(0);
    expect(printed(channelAnalytics.stdout).map((metric: { label: string }) => metric.label)).toContain('Followers');
    const postAnalytics = await postiz(['analytics:post', entry.postId, '-d', '30']);
    expect(postAnalytics.code, postAnalytics.stdout + postAnalytics.stderr).toBe(0);
    expect(printed(postAnalytics.stdout).map((metric: { label: string }) => metric.label)).toContain('Likes');

    // A post whose platform gave no usable id: missing, then linked.
    const em = herald.services.orm.em.fork();
    const post = await em.findOneOrFail(PostSchema, { id: entry.postId });
    const realId = post.releaseId!;
    post.releaseId = 'missing';
    await em.flush();
    const missing = await postiz(['posts:missing', entry.postId]);
    expect(missing.code, missing.stdout + missing.stderr).toBe(0);
    expect(printed(missing.stdout).map((item: { id: string }) => item.id)).toContain(realId);
    const connected = await postiz(['posts:connect', entry.postId, '--release-id', realId]);
    expect(connected.code, connected.stdout + connected.stderr).toBe(0);
    expect((await herald.services.orm.em.fork().findOneOrFail(PostSchema, { id: entry.postId })).releaseId).toBe(realId);

    const draft = await postiz(['posts:create', '-c', 'A draft', '-s', date, '-t', 'draft', '-i', blueskyChannel]);
    expect(draft.code, draft.stdout + draft.stderr).toBe(0);
    const draftId = printed(draft.stdout)[0]?.postId as string;
    expect(draftId, draft.stdout).toBeTypeOf('string');
    const deleted = await postiz(['posts:delete', draftId]);
    expect(deleted.code, deleted.stdout + deleted.stderr).toBe(0);
    expect(await herald.services.orm.em.fork().count(PostSchema, { id: draftId, deletedAt: null })).toBe(0);
  });
});

describe('postiz auth:login against Herald (device authorization)', () => {
  it('POSTIZ_AUTH_SERVER=<herald> postiz auth:login, approved in the console; then status, a command with the stored token, logout', async () => {
    const browser = new ConsoleClient(herald.url);
    await browser.signUp({ email: 'cli@example.com', password: 'a long enough password', invitation: await setupToken(herald) });
    const login = spawn(process.execPath, [CLI, 'auth:login'], { env: { PATH: '/nonexistent', HOME: home, POSTIZ_AUTH_SERVER: herald.url } });
    let output = '';
    login.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    login.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => login.once('exit', resolve));
    const deadline = Date.now() + 15_000;
    while (!/[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}/.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const userCode = /([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})/.exec(output)![1];
    expect(output).toContain(`${herald.url}/device`);
    const page = await browser.submit(`/device?code=${userCode}`, '/device', { code: userCode });
    await browser.request('POST', '/device/decide', { _csrf: browser.csrf(page), code: userCode, action: 'approve', scope: ['mcp:read', 'mcp:write'], organizationId: herald.organizationId });
    expect(await exited, output).toBe(0);
    expect(output).toContain('Successfully authenticated');
    const credentials = JSON.parse(fs.readFileSync(path.join(home, '.postiz', 'credentials.json'), 'utf8')) as { accessToken: string; apiUrl: string; organizationId: string };
    expect(credentials.apiUrl).toBe(`${herald.url}/api`);
    expect(credentials.organizationId).toBe(herald.organizationId);

    const status = await postiz(['auth:status'], {});
    expect(status.stdout).toContain('Credentials are valid. 2 integration(s) connected.');
    const integrations = await postiz(['integrations:list'], {});
    expect(integrations.code, integrations.stdout + integrations.stderr).toBe(0);
    expect(printed(integrations.stdout)).toHaveLength(2);
    const logout = await postiz(['auth:logout'], {});
    expect(logout.stdout).toContain('Credentials removed');
    expect(fs.existsSync(path.join(home, '.postiz', 'credentials.json'))).toBe(false);
  });
});
