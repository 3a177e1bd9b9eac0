// Named keys from the command line (issue 23: "created, listed, rotated and revoked in the console, the CLI and REST"):
// `npm run herald -- key:create --name`, `key:list`, `key:rotate`, `key:revoke` on the database of a running Herald, each
// change in the audit trail as the operator's, never with the secret.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restCall, startHerald, type Herald } from './helpers/harness.js';
import { repositoryRoot } from './helpers/herald-process.js';

let herald: Herald;

beforeAll(async () => {
  herald = await startHerald();
});

afterAll(async () => {
  await herald?.stop();
});

function cli(...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repositoryRoot, 'scripts/run.mjs'), 'cli', ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, DATABASE_URL: herald.databaseUrl, LOG_LEVEL: 'warn' },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

const secretIn = (out: string) => /: (hrld_\S+|\S{40,})\n/.exec(out)?.[1];

describe('named keys from the command line', () => {
  it('creates, lists, rotates and revokes an agent key; the old secret stops at rotation; the trail names the operator', async () => {
    const created = await cli('key:create', '--name', 'Cursor agent', '--org', herald.organizationId);
    expect(created.code, created.out).toBe(0);
    expect(created.out).toContain('Scopes: read, posts:write');
    const id = /\(([^)]+)\)/.exec(created.out)![1];
    const first = secretIn(created.out)!;
    expect((await restCall(herald.restUrl, first, 'GET', '/integrations')).status).toBe(200);

    const listed = await cli('key:list', herald.organizationId);
    expect(listed.code, listed.out).toBe(0);
    expect(listed.out).toContain(`${id}\tCursor agent\tread,posts:write`);
    expect(listed.out).not.toContain(first);

    const rotated = await cli('key:rotate', id);
    expect(rotated.code, rotated.out).toBe(0);
    const second = secretIn(rotated.out)!;
    expect(second).not.toBe(first);
    expect((await restCall(herald.restUrl, first, 'GET', '/integrations')).status).toBe(401);
    expect((await restCall(herald.restUrl, second, 'GET', '/integrations')).status).toBe(200);

    const refused = await cli('key:rotate', 'no-such-key');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('key:rotate needs the id of a live named key');

    const revoked = await cli('key:revoke', id);
    expect(revoked.code, revoked.out).toBe(0);
    expect((await restCall(herald.restUrl, second, 'GET', '/integrations')).status).toBe(401);

    const trail = await restCall(herald.restUrl, herald.apiKey, 'GET', '/audit?action=key');
    const events = (trail.body as { events: { action: string; actor: { name: string }; via: string; target: { id: string } }[] }).events.filter((event) => event.target.id === id);
    expect(events.map((event) => event.action).sort()).toEqual(['key.created', 'key.revoked', 'key.rotated']);
    for (const event of events) expect(event).toMatchObject({ actor: { name: 'The operator (command line)' }, via: 'cli' });
    expect(JSON.stringify(trail.body)).not.toContain(first);
    expect(JSON.stringify(trail.body)).not.toContain(second);
  }, 180_000); // five CLI processes, each opening the database


  it('renewing the organization key is in the trail too', async () => {
    const renewed = await cli('key:create', herald.organizationId);
    expect(renewed.code, renewed.out).toBe(0);
    const key = /API key: (\S+)/.exec(renewed.out)![1];
    const trail = await restCall(herald.restUrl, key, 'GET', '/audit?action=key.created');
    const events = (trail.body as { events: { summary: string; via: string }[] }).events;
    expect(events.some((event) => event.via === 'cli' && event.summary.includes('made a new organization key'))).toBe(true);
    expect(JSON.stringify(trail.body)).not.toContain(key);
  }, 60_000);
});
