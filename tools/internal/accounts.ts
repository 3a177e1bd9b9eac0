// Users, organizations they belong to, invitations (an owner's, or the operator's setup links) and browser sessions.
// Sessions and invitations are random tokens stored as SHA-256 hashes; passwords are scrypt hashes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { OrganizationSchema } from '../../src/db/entities.js';
import { InvitationSchema, MembershipSchema, UserSchema, WebSessionSchema, type Invitation, type Role, type User, type WebSession } from '../../src/db/account-entities.js';
import { conflict, DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import { decoyHash, hashPassword, verifyPassword } from '../../src/lib/password.js';
import { createOrganization } from './credentials.js';
import { recordAudit, recordChange } from './audit.js';
import { currentCaller } from './visibility.js';

export const SESSION_DAYS = 30;
const INVITATION_DAYS = 7;
/** How long a setup link works: it is printed to a terminal and so to logs, and a fresh one is one command away. */
export const SETUP_LINK_HOURS = 24;
const DAY_MS = 24 * 60 * 60 * 1000;
export const PASSWORD_MIN = 10;
const PASSWORD_MAX = 200;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

function checkCredentialsShape(email: string, password: string): void {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw invalidInput('Enter a valid email address.');
  if (password.length < PASSWORD_MIN) throw invalidInput(`Choose a password of at least ${PASSWORD_MIN} characters.`);
  if (password.length > PASSWORD_MAX) throw invalidInput(`Choose a password of at most ${PASSWORD_MAX} characters.`);
}

export interface SignUpInput {
  email: string;
  password: string;
  name: string;
  organizationName: string;
  /** An invitation link's token: an owner's invitation, or a setup link the operator printed. */
  invitationToken?: string;
}

/**
 * Creates a user. With an invitation (or a setup link) the user joins its organization with its role; without one, only
 * where open sign-up is allowed, as owner of a new, empty organization. Being the first to reach a new Herald gives
 * nothing: the first owner comes from the setup link only the operator has (DESIGN §9).
 */
export async function signUp(em: EntityManager, input: SignUpInput, options: { allowSignup: boolean; now: Date }): Promise<{ user: User; organizationId: string }> {
  const email = normalizeEmail(input.email);
  checkCredentialsShape(email, input.password);
  return em.transactional(async (tx) => {
    // One sign-up at a time: the email check below then holds (the unique index would otherwise answer a 500).
    await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', ['herald:signup']);
    const invitation = input.invitationToken ? await findUsableInvitation(tx, input.invitationToken, options.now) : undefined;
    if (!invitation && !options.allowSignup) throw signUpClosed();
    if (await tx.findOne(UserSchema, { email })) {
      // Says no more than a failed log-in would: the address may or may not have an account.
      throw conflict('An account cannot be created with these details.', { hint: 'If you already have an account, log in; an invitation link can then be opened while logged in.' });
    }
    const user = tx.create(UserSchema, { id: newId(), email, name: input.name.trim().slice(0, 100), passwordHash: await hashPassword(input.password), createdAt: options.now });
    await tx.flush();
    let organizationId: string;
    let role: Role = 'owner';
    if (invitation) {
      await claimInvitation(tx, invitation, user.id, options.now);
      organizationId = invitation.organizationId;
      role = invitation.role;
    } else {
      organizationId = (await createOrganization(tx, input.organizationName.trim() || `${user.email}'s organization`)).id;
    }
    tx.create(MembershipSchema, { userId: user.id, organizationId, role, createdAt: options.now });
    await tx.flush();
    if (invitation) await recordJoined(tx, organizationId, user, role, options.now);
    return { user, organizationId };
  });
}

export const signUpClosed = () =>
  new DomainError('forbidden', 'Sign-up on this Herald is by invitation.', {
    hint: 'Open the invitation link an owner sent you. Setting up a new Herald? Open the setup link it printed at its first start, or print a new one on the server with: npm run herald -- setup-link',
  });

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

async function findUsableInvitation(em: EntityManager, token: string, now: Date): Promise<Invitation> {
  const invitation = token.length <= 200 ? await em.findOne(InvitationSchema, { tokenHash: sha256(token) }) : null;
  if (!invitation || invitation.usedAt || invitation.expiresAt <= now) {
    throw invalidInput('This invitation link is not valid any more.', {
      hint: invitation?.createdBy === null
        ? `Setup links work once and for ${SETUP_LINK_HOURS} hours; print a new one on the server with: npm run herald -- setup-link`
        : `Invitation links work once and for ${INVITATION_DAYS} days; ask an owner for a new one.`,
    });
  }
  return invitation;
}

/** Marks the invitation used by `userId`; of two people using one link at once, only one gets through. */
async function claimInvitation(em: EntityManager, invitation: Invitation, userId: string, now: Date): Promise<void> {
  const claimed = await em.nativeUpdate(InvitationSchema, { id: invitation.id, usedAt: null }, { usedAt: now, usedBy: userId });
  if (claimed !== 1) throw invalidInput('This invitation link is not valid any more.', { hint: 'It was used a moment ago.' });
}

export interface DescribedInvitation {
  organizationName: string;
  role: Role;
  /** A setup link from the operator (the organization's first owner), not an owner's invitation. */
  setup: boolean;
}

export async function describeInvitation(em: EntityManager, token: string, now: Date): Promise<DescribedInvitation> {
  const invitation = await findUsableInvitation(em, token, now);
  const organization = await em.findOneOrFail(OrganizationSchema, { id: invitation.organizationId });
  return { organizationName: organization.name, role: invitation.role, setup: invitation.createdBy === null };
}

export async function createInvitation(em: EntityManager, organizationId: string, createdBy: string, role: Role, now: Date): Promise<string> {
  const token = await insertInvitation(em, { organizationId, createdBy, role, now, lifetimeMs: INVITATION_DAYS * DAY_MS });
  await recordChange(em, organizationId, { action: 'member.invited', target: { kind: 'invitation', id: null }, did: `invited a new ${role}`, changes: { role } });
  return token;
}

/** The trail's record of a person joining: they are the actor (they may belong to no organization the console acts on yet). */
async function recordJoined(em: EntityManager, organizationId: string, user: User, role: Role, now: Date): Promise<void> {
  const actor = { kind: 'person' as const, id: user.id, name: user.name || user.email };
  const origin = currentCaller()?.origin;
  await recordAudit(em, {
    organizationId,
    actor,
    via: 'console',
    address: origin?.address ?? null,
    client: origin?.client ?? null,
    action: 'member.joined',
    target: { kind: 'member', id: user.id },
    summary: `${actor.name} joined the organization as ${role === 'owner' ? 'an owner' : 'a member'}.`,
    changes: { role, email: user.email },
  }, now);
}

async function insertInvitation(em: EntityManager, values: { organizationId: string; createdBy: string | null; role: Role; now: Date; lifetimeMs: number }): Promise<string> {
  const token = randomToken(24);
  em.create(InvitationSchema, {
    id: newId(),
    organizationId: values.organizationId,
    tokenHash: sha256(token),
    role: values.role,
    createdBy: values.createdBy,
    createdAt: values.now,
    expiresAt: new Date(values.now.getTime() + values.lifetimeMs),
    usedAt: null,
    usedBy: null,
  });
  await em.flush();
  return token;
}

/**
 * A setup link: what only the operator has (it is printed in the first-start banner and by the CLI), making whoever opens
 * it first an owner of the organization. It is an owner invitation with no user behind it: random, stored as a hash, used
 * once, bound to one organization, and short-lived because it lands in logs. A new one replaces the organization's unused
 * ones, so a link that leaked stops working when the operator prints another.
 */
export async function createSetupLink(em: EntityManager, organizationId: string, options: { publicUrl: string; now: Date }): Promise<string> {
  if (!(await em.findOne(OrganizationSchema, { id: organizationId }))) throw notFound(`Organization ${organizationId} not found.`, { hint: 'List them with  npm run herald -- org:list' });
  // Expired rather than deleted, so opening an old one still says it was a setup link and how to get a new one.
  await em.nativeUpdate(InvitationSchema, { organizationId, createdBy: null, usedAt: null, expiresAt: { $gt: options.now } }, { expiresAt: options.now });
  const token = await insertInvitation(em, { organizationId, createdBy: null, role: 'owner', now: options.now, lifetimeMs: SETUP_LINK_HOURS * 60 * 60 * 1000 });
  return invitationUrl(options.publicUrl, token);
}

export const invitationUrl = (publicUrl: string, token: string) => `${publicUrl}/invite/${token}`;

/** Whether any organization has an owner yet (the banner then stops pointing at the setup link). */
export async function hasOwner(em: EntityManager): Promise<boolean> {
  return (await em.count(MembershipSchema, { role: 'owner' })) > 0;
}

/** A logged-in user joins the invitation's organization. */
export async function acceptInvitation(em: EntityManager, token: string, userId: string, now: Date): Promise<string> {
  return em.transactional(async (tx) => {
    const invitation = await findUsableInvitation(tx, token, now);
    await claimInvitation(tx, invitation, userId, now);
    const existing = await tx.findOne(MembershipSchema, { userId, organizationId: invitation.organizationId });
    // A member given an owner's link (a setup link, to hand an organization back to someone) becomes an owner.
    const roleBefore = existing?.role;
    if (!existing) tx.create(MembershipSchema, { userId, organizationId: invitation.organizationId, role: invitation.role, createdAt: now });
    else if (invitation.role === 'owner') existing.role = 'owner';
    await tx.flush();
    if (!existing || (invitation.role === 'owner' && roleBefore !== 'owner')) {
      await recordJoined(tx, invitation.organizationId, await tx.findOneOrFail(UserSchema, { id: userId }), invitation.role, now);
    }
    return invitation.organizationId;
  });
}

export async function membersOf(em: EntityManager, organizationId: string): Promise<{ id: string; email: string; name: string; role: Role }[]> {
  return em.getConnection().execute(
    'select u.id, u.email, u.name, m.role from membership m join app_user u on u.id = m.user_id where m.organization_id = ? order by m.created_at',
    [organizationId],
  );
}
