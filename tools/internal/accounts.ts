// Users, organizations they belong to, invitations and browser sessions. Sessions and invitations are random tokens stored
// as SHA-256 hashes; passwords are scrypt hashes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { OrganizationSchema } from '../../src/db/entities.js';
import { InvitationSchema, MembershipSchema, UserSchema, WebSessionSchema, type Role, type User, type WebSession } from '../../src/db/account-entities.js';
import { conflict, DomainError, invalidInput } from '../../src/errors.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import { decoyHash, hashPassword, verifyPassword } from '../../src/lib/password.js';
import { createOrganization } from './credentials.js';

export const SESSION_DAYS = 30;
const INVITATION_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;
export const PASSWORD_MIN = 10;
const PASSWORD_MAX = 200;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

function checkCredentialsShape(email: string, password: string): void {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw invalidInput('Enter a valid email address.');
  if (password.length < PASSWORD_MIN) throw invalidInput(`Choose a password of at least ${PASSWORD_MIN} characters.`);
  if (password.length > PASSWORD_MAX) throw invalidInput(`Choose a password of at most ${PASSWORD_MAX} characters.`);
}

export async function userCount(em: EntityManager): Promise<number> {
  return em.count(UserSchema, {});
}

export interface SignUpInput {
  email: string;
  password: string;
  name: string;
  organizationName: string;
  invitationToken?: string;
}

/**
 * Creates a user. The first user of the instance becomes owner of the organizations created from the command line (the
 * first start makes one, whose API key was printed), or of a new organization when there is none. Later users need an
 * invitation, unless open sign-up is allowed (then they own a new organization).
 */
export async function signUp(em: EntityManager, input: SignUpInput, options: { allowSignup: boolean; now: Date }): Promise<{ user: User; organizationId: string }> {
  const email = normalizeEmail(input.email);
  checkCredentialsShape(email, input.password);
  return em.transactional(async (tx) => {
    // One sign-up at a time decides who is first.
    await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', ['herald:signup']);
    const first = (await tx.count(UserSchema, {})) === 0;
    const invitation = input.invitationToken ? await findUsableInvitation(tx, input.invitationToken, options.now) : undefined;
    if (!first && !invitation && !options.allowSignup) {
      throw new DomainError('forbidden', 'Sign-up on this Herald is by invitation.', { hint: 'Ask an owner of your organization for an invitation link.' });
    }
    if (await tx.findOne(UserSchema, { email })) {
      // Says no more than a failed log-in would: the address may or may not have an account.
      throw conflict('An account cannot be created with these details.', { hint: 'If you already have an account, log in; an invitation link can then be opened while logged in.' });
    }
    const user = tx.create(UserSchema, { id: newId(), email, name: input.name.trim().slice(0, 100), passwordHash: await hashPassword(input.password), createdAt: options.now });
    await tx.flush();
    let organizationIds: string[];
    let role: Role = 'owner';
    if (invitation) {
      organizationIds = [invitation.organizationId];
      role = invitation.role;
      Object.assign(invitation, { usedAt: options.now, usedBy: user.id });
    } else if (first) {
      const orphans = await tx.getConnection().execute<{ id: string }[]>(
        'select id from organization o where not exists (select 1 from membership m where m.organization_id = o.id) order by created_at',
      );
      organizationIds = orphans.map((row) => row.id);
      if (organizationIds.length === 0) organizationIds = [(await createOrganization(tx, input.organizationName.trim() || 'My organization')).id];
    } else {
      organizationIds = [(await createOrganization(tx, input.organizationName.trim() || `${user.email}'s organization`)).id];
    }
    for (const organizationId of organizationIds) tx.create(MembershipSchema, { userId: user.id, organizationId, role, createdAt: options.now });
    await tx.flush();
    return { user, organizationId: organizationIds[0] };
  });
}

/** The user whose email and password match, or undefined; takes as long for an unknown email as for a wrong password. */
export async function authenticate(em: EntityManager, email: string, password: string): Promise<User | undefined> {
  const user = await em.findOne(UserSchema, { email: normalizeEmail(email) });
  const matches = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
  return user && matches ? user : undefined;
}

export async function createSession(em: EntityManager, userId: string, organizationId: string | null, now: Date): Promise<string> {
  const token = randomToken(32);
  em.create(WebSessionSchema, {
    id: newId(),
    tokenHash: sha256(token),
    userId,
    organizationId,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + SESSION_DAYS * DAY_MS),
  });
  await em.flush();
  return token;
}

export interface OrganizationChoice {
  id: string;
  name: string;
  role: Role;
}

export interface SignedIn {
  session: WebSession;
  user: User;
  organizations: OrganizationChoice[];
  /** The organization the console acts on, with the user's role in it. */
  organization?: OrganizationChoice;
}

export async function organizationsOf(em: EntityManager, userId: string): Promise<OrganizationChoice[]> {
  const rows = await em.getConnection().execute<{ id: string; name: string; role: Role }[]>(
    'select o.id, o.name, m.role from membership m join organization o on o.id = m.organization_id where m.user_id = ? order by o.created_at',
    [userId],
  );
  return rows.map((row) => ({ id: row.id, name: row.name, role: row.role }));
}

export async function resolveSession(em: EntityManager, token: string | undefined, now: Date): Promise<SignedIn | undefined> {
  if (!token || token.length > 200) return undefined;
  const session = await em.findOne(WebSessionSchema, { tokenHash: sha256(token) });
  if (!session || session.expiresAt <= now) return undefined;
  const user = await em.findOne(UserSchema, { id: session.userId });
  if (!user) return undefined;
  const organizations = await organizationsOf(em, user.id);
  let organization = organizations.find((item) => item.id === session.organizationId) ?? organizations[0];
  if (organization && session.organizationId !== organization.id) session.organizationId = organization.id;
  if (now.getTime() - session.lastSeenAt.getTime() > 60_000) session.lastSeenAt = now;
  await em.flush();
  return { session, user, organizations, organization };
}

export async function endSession(em: EntityManager, token: string | undefined): Promise<void> {
  if (token) await em.nativeDelete(WebSessionSchema, { tokenHash: sha256(token) });
}

/** Points the session at another organization of its user. */
export async function switchOrganization(em: EntityManager, session: WebSession, organizationId: string): Promise<void> {
  if (!(await em.findOne(MembershipSchema, { userId: session.userId, organizationId }))) throw invalidInput('You are not a member of that organization.');
  await em.nativeUpdate(WebSessionSchema, { id: session.id }, { organizationId });
}

async function findUsableInvitation(em: EntityManager, token: string, now: Date) {
  const invitation = await em.findOne(InvitationSchema, { tokenHash: sha256(token) });
  if (!invitation || invitation.usedAt || invitation.expiresAt <= now) {
    throw invalidInput('This invitation link is not valid any more.', { hint: 'Invitation links work once and for 7 days; ask an owner for a new one.' });
  }
  return invitation;
}

export async function describeInvitation(em: EntityManager, token: string, now: Date): Promise<{ organizationName: string; role: Role }> {
  const invitation = await findUsableInvitation(em, token, now);
  const organization = await em.findOneOrFail(OrganizationSchema, { id: invitation.organizationId });
  return { organizationName: organization.name, role: invitation.role };
}

export async function createInvitation(em: EntityManager, organizationId: string, createdBy: string, role: Role, now: Date): Promise<string> {
  const token = randomToken(24);
  em.create(InvitationSchema, {
    id: newId(),
    organizationId,
    tokenHash: sha256(token),
    role,
    createdBy,
    createdAt: now,
    expiresAt: new Date(now.getTime() + INVITATION_DAYS * DAY_MS),
    usedAt: null,
    usedBy: null,
  });
  await em.flush();
  return token;
}

/** A logged-in user joins the invitation's organization. */
export async function acceptInvitation(em: EntityManager, token: string, userId: string, now: Date): Promise<string> {
  const invitation = await findUsableInvitation(em, token, now);
  const existing = await em.findOne(MembershipSchema, { userId, organizationId: invitation.organizationId });
  if (!existing) em.create(MembershipSchema, { userId, organizationId: invitation.organizationId, role: invitation.role, createdAt: now });
  Object.assign(invitation, { usedAt: now, usedBy: userId });
  await em.flush();
  return invitation.organizationId;
}

export async function membersOf(em: EntityManager, organizationId: string): Promise<{ id: string; email: string; name: string; role: Role }[]> {
  return em.getConnection().execute(
    'select u.id, u.email, u.name, m.role from membership m join app_user u on u.id = m.user_id where m.organization_id = ? order by m.created_at',
    [organizationId],
  );
}
