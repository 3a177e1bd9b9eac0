// An organization's people and name, as its owners change them (the console's Members and Settings pages): a member's
// role, removing a member (their console sessions in it end), and renaming the organization. An organization always
// keeps an owner. Every change is in the audit trail.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MembershipSchema, WebSessionSchema, type Role } from '../../src/db/account-entities.js';
import { OrganizationSchema } from '../../src/db/entities.js';
import { conflict, DomainError } from '../../src/errors.js';
import { recordChange } from './audit.js';

async function membershipOf(em: EntityManager, organizationId: string, userId: string) {
  const membership = await em.findOne(MembershipSchema, { organizationId, userId });
  if (!membership) throw new DomainError('not_found', 'This person is not a member of the organization.', { hint: 'Reload the Members page.' });
  return membership;
}

async function refuseLastOwner(em: EntityManager, organizationId: string, what: string): Promise<void> {
  if ((await em.count(MembershipSchema, { organizationId, role: 'owner' })) <= 1) {
    throw conflict(`${what}: the organization would have no owner.`, { hint: 'Make another member an owner first.' });
  }
}

export async function changeMemberRole(em: EntityManager, organizationId: string, userId: string, role: unknown): Promise<void> {
  if (role !== 'owner' && role !== 'member') throw new DomainError('invalid_input', 'Role must be "owner" or "member".');
  const membership = await membershipOf(em, organizationId, userId);
  if (membership.role === role) return;
  if (membership.role === 'owner') await refuseLastOwner(em, organizationId, 'The last owner cannot become a member');
  membership.role = role as Role;
  await em.flush();
  await recordChange(em, organizationId, { action: 'member.role_changed', target: { kind: 'user', id: userId }, did: `made a member ${role === 'owner' ? 'an owner' : 'a member'}`, changes: { role } });
}

export async function removeMember(em: EntityManager, organizationId: string, userId: string): Promise<void> {
  const membership = await membershipOf(em, organizationId, userId);
  if (membership.role === 'owner') await refuseLastOwner(em, organizationId, 'The last owner cannot be removed');
  await em.nativeDelete(MembershipSchema, { organizationId, userId });
  // Their console sessions in this organization end: the next page asks them to sign in again.
  await em.nativeDelete(WebSessionSchema, { userId, organizationId });
  await recordChange(em, organizationId, { action: 'member.removed', target: { kind: 'user', id: userId }, did: 'removed a member from the organization' });
}

export async function renameOrganization(em: EntityManager, organizationId: string, name: unknown): Promise<string> {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (!trimmed || trimmed.length > 100) throw new DomainError('invalid_input', 'Give the organization a name of 1 to 100 characters.');
  const organization = await em.findOneOrFail(OrganizationSchema, { id: organizationId });
  const before = organization.name;
  organization.name = trimmed;
  await em.flush();
  await recordChange(em, organizationId, { action: 'organization.renamed', target: { kind: 'organization', id: organizationId }, did: `renamed the organization "${trimmed}"`, changes: { from: before, to: trimmed } });
  return trimmed;
}
