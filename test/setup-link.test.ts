// The first owner of a new Herald, with real processes: the first start prints a one-time setup link (PUBLIC_URL), a
// visitor without it becomes owner of nothing, the CLI prints a fresh one (the old one stops working) and a setup link
// for each organization it creates, and each link makes one person owner of its own organization, once.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestDatabase } from './helpers/harness.js';
import { freePort, repositoryRoot, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { ConsoleClient } from './helpers/console-client.js';

const PASSWORD = 'correct horse battery';
let env: Record<string, string>;
let publicUrl: string;
let herald: HeraldProcess | undefined;
let dataDir: string;

beforeAll(async () => {
  const port = String(await freePort());
  publicUrl = `http://127.0.0.1:${port}`;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-setup-'));
  env = { DATABASE_URL: await newTestDatabase(), PORT: port, PUBLIC_URL: publicUrl, DATA_DIR: dataDir };
});

afterAll(async () => {
  await herald?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** `npm run herald -- <args>` on the same database, as an operator would run it on the server. */
function cli(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), path.join(repositoryRoot, 'src/cli.ts'), ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

const tokenOf = (text: string, label: RegExp) => {
  // Not \b after the token: a token may end in '-', after which a newline is no word boundary (one link in 64 failed).
  const match = new RegExp(`${label.source}\\s+${publicUrl.replace(/[.]/g, '\\.')}/invite/([\\w-]{32})(?![\\w-])`).exec(text);
  if (!match) throw new Error(`No setup link in:\n${text}`);
  return match[1];
};

async function signUpWith(token: string, email: string) {
  const browser = new ConsoleClient(publicUrl);
  const answer = await browser.signUp({ email, password: PASSWORD, invitation: token });
  return { browser, answer };
}

describe('the first owner of a new Herald', () => {
  let bannerToken: string;
  let firstOrganizationId: string;

  it('the first start prints a setup link with PUBLIC_URL; a restart before anyone used it says how to get one', async () => {
    herald = await startHeraldProcess({ env });
    bannerToken = tokenOf(herald.stdout(), /Set up:/);
    expect(herald.stdout()).toContain('It works once, for 24 hours; a new one:  npm run herald -- setup-link');
    await herald.stop();
    herald = await startHeraldProcess({ env });
    expect(herald.stdout()).toContain('Set up:    no owner yet: print a setup link with  npm run herald -- setup-link');
    expect(herald.stdout()).not.toContain('/invite/');
  }, 180_000);

  it('a visitor without the link cannot sign up, so becomes owner of nothing', async () => {
    const visitor = new ConsoleClient(publicUrl);
    expect((await visitor.get('/signup')).status).toBe(403);
    const attempt = await visitor.request('POST', '/signup', { _csrf: visitor.csrf(await visitor.get('/login')), email: 'visitor@example.com', password: PASSWORD, name: '', organizationName: '' });
    expect(attempt.status).toBe(403);
    expect((await visitor.logIn('visitor@example.com', PASSWORD)).status).toBe(401);
  });

  it('the CLI prints a setup link for an organization it creates, and a fresh one for the first (the banner one then stops working)', async () => {
    const created = await cli(['org:create', 'Made with the CLI']);
    expect(created.code, created.output).toBe(0);
    expect(created.output).toMatch(/API key: hrld_/);
    const cliToken = tokenOf(created.output, /Setup link:/);

    const database = new pg.Client({ connectionString: env.DATABASE_URL });
    await database.connect();
    firstOrganizationId = (await database.query("select id from organization where name = 'My organization'")).rows[0].id;
    await database.end();
    const unknown = await cli(['setup-link', 'no-such-organization']);
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain('Organization no-such-organization not found');
    const fresh = await cli(['setup-link', firstOrganizationId]);
    expect(fresh.code, fresh.output).toBe(0);
    const freshToken = tokenOf(fresh.output, /Setup link:/);

    const stale = await new ConsoleClient(publicUrl).get(`/signup?invitation=${bannerToken}`);
    expect(stale.status).toBe(400);
    expect(stale.text).toContain('print a new one on the server with');

    // Each link makes its person owner of its own organization, and of nothing else.
    const olivia = await signUpWith(freshToken, 'olivia@example.com');
    expect(olivia.answer.location).toBe('/channels');
    const oliviaMembers = await olivia.browser.get('/members');
    expect(oliviaMembers.text).toContain('Members of My organization');
    expect(oliviaMembers.text).not.toContain('Made with the CLI');
    const carl = await signUpWith(cliToken, 'carl@example.com');
    expect(carl.answer.location).toBe('/channels');
    const carlMembers = await carl.browser.get('/members');
    expect(carlMembers.text).toContain('Members of Made with the CLI');
    expect(carlMembers.text).not.toContain('My organization');
    expect(carlMembers.text).toContain('Create invitation link');

    // Once: the same link again is refused.
    const again = new ConsoleClient(publicUrl);
    const reused = await again.request('POST', '/signup', { _csrf: again.csrf(await again.get('/login')), email: 'mallory@example.com', password: PASSWORD, invitation: freshToken });
    expect(reused.status).toBe(400);
  }, 240_000);

  it('once an owner exists, a restart prints no setup hint', async () => {
    await herald!.stop();
    herald = await startHeraldProcess({ env });
    expect(herald.stdout()).not.toContain('Set up:');
    expect(herald.stdout()).toContain('API key:   already created');
  }, 180_000);
});
