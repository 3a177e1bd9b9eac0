// Members and the organization as an owner manages them in the console (issue 36): a member's role changed, a member
// removed (their session in the organization ends), the last owner kept, and the organization renamed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { ownerInvitation } from './helpers/browser.js';
import { ConsoleClient, textOf } from './helpers/console-client.js';

let herald: Herald;
let owner: ConsoleClient;
let member: ConsoleClient;
let ownerId: string;
let memberId: string;
const db = () => herald.services.orm.em.fork().getConnection();
const roles = async () => Object.fromEntries((await db().execute('select user_id, role from membership where organization_id = ?', [herald.organizationId])).map((row: any) => [row.user_id, row.role]));

beforeAll(async () => {
  herald = await startHerald();
  owner = new ConsoleClient(herald.url);
  await owner.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await ownerInvitation(herald) });
  const invited = await owner.submit('/members', '/members/invite', { role: 'member' });
  const link = textOf(await owner.follow(invited), 'invitation-link');
  member = new ConsoleClient(herald.url);
  expect((await member.signUp({ email: 'member@example.com', password: 'another horse battery', name: 'Mia Member', invitation: link.slice(link.lastIndexOf('/') + 1) })).status).toBe(303);
  const users = await db().execute('select id, email from app_user');
  ownerId = (users as any[]).find((user) => user.email === 'owner@example.com')!.id;
  memberId = (users as any[]).find((user) => user.email === 'member@example.com')!.id;
});
afterAll(async () => {
  await herald?.stop();
});

describe('members and the organization in the console', () => {
  it('changes a member\'s role, and keeps the last owner', async () => {
    expect((await owner.get('/members')).text).toContain('aria-label="Remove member@example.com"');
    expect((await owner.submit('/members', `/members/${memberId}/role`, { role: 'owner' })).location).toBe('/members');
    expect(await roles()).toEqual({ [ownerId]: 'owner', [memberId]: 'owner' });
    expect((await owner.submit('/members', `/members/${memberId}/role`, { role: 'member' })).location).toBe('/members');
    const last = await owner.submit('/members', `/members/${ownerId}/role`, { role: 'member' });
    expect(last.status).toBe(409);
    expect(last.text).toContain('The last owner cannot become a member: the organization would have no owner. Make another member an owner first.');
    expect((await owner.submit('/members', `/members/${memberId}/role`, { role: 'admin' })).status).toBe(400);
    expect(await roles()).toEqual({ [ownerId]: 'owner', [memberId]: 'member' });
    // A member sees the roles, not the forms, and cannot post them.
    expect((await member.get('/members')).text).not.toContain('/remove');
    expect((await member.submit('/members', `/members/${ownerId}/remove`, { confirm: 'yes' })).status).toBe(403);
  });

  it('removes a member after a tick: their console session in the organization ends', async () => {
    const unticked = await owner.submit('/members', `/members/${memberId}/remove`);
    expect(unticked.status).toBe(400);
    expect(unticked.text).toContain('Tick the box to confirm');
    expect((await owner.submit('/members', `/members/${memberId}/remove`, { confirm: 'yes' })).location).toBe('/members');
    expect(await roles()).toEqual({ [ownerId]: 'owner' });
    const after = await member.get('/channels');
    expect(after.status).toBe(303);
    expect(after.location).toMatch(/^\/login/);
  });

  it('renames the organization; an empty name is refused', async () => {
    const empty = await owner.submit('/settings', '/settings/organization-name', { name: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Give the organization a name of 1 to 100 characters.');
    expect((await owner.submit('/settings', '/settings/organization-name', { name: 'Bäckerei <Süd>' })).location).toBe('/settings?notice=renamed');
    const page = await owner.get('/settings?notice=renamed');
    expect(page.text).toContain('<span>Bäckerei &lt;Süd&gt;</span>');
    expect((await db().execute('select action from audit_event where action in (?, ?, ?) order by at', ['member.role_changed', 'member.removed', 'organization.renamed'])).map((row: any) => row.action)).toEqual([
      'member.role_changed',
      'member.role_changed',
      'member.removed',
      'organization.renamed',
    ]);
  });
});
