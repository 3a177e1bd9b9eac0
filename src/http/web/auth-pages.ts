// Sign-up, log-in, log-out, invitations and the organization switch.
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import { consumeRateLimit } from '../../lib/rate-limit.js';
import { sha256 } from '../../lib/crypto.js';
import {
  acceptInvitation,
  authenticate,
  createSession,
  describeInvitation,
  endSession,
  normalizeEmail,
  organizationsOf,
  PASSWORD_MIN,
  signUp,
  signUpClosed,
  switchOrganization,
} from '../../../tools/internal/accounts.js';
import type { Services } from '../../../tools/types.js';
import { clientError, csrfField, html, sendPage, sentence, type Markup } from './html.js';
import { clearSessionCookie, consoleLocals, requireSignedIn, safeNext, setSessionCookie } from './session.js';

const LOGIN_PER_EMAIL_PER_HOUR = 10;
const LOGIN_PER_ADDRESS_PER_HOUR = 50;
/** Where open sign-up is allowed, each sign-up makes an organization: a bound on what one address can make. */
const SIGNUPS_PER_ADDRESS_PER_HOUR = 20;

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** `path` with `next` carried along, so a person sent to log in (from /device, a consent screen) comes back there. */
const withNext = (path: string, next: string | undefined) => (next ? `${path}${path.includes('?') ? '&' : '?'}next=${encodeURIComponent(next)}` : path);

/** The token of an invitation or setup link, whether the token itself or the whole link was given. */
function invitationToken(value: string): string | undefined {
  const trimmed = value.trim();
  const index = trimmed.lastIndexOf('/invite/');
  return (index >= 0 ? trimmed.slice(index + '/invite/'.length).split(/[?#/]/)[0] : trimmed) || undefined;
}

interface SignUpFormOptions {
  invitation?: string;
  next?: string;
  email?: string;
  name?: string;
  organizationName?: string;
}

function signUpForm(csrf: string, options: SignUpFormOptions): Markup {
  return html`<form method="post" action="/signup" class="card">
    ${csrfField(csrf)}
    ${options.invitation ? html`<input type="hidden" name="invitation" value="${options.invitation}">` : ''}
    ${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : ''}
    <label for="name">Your name</label>
    <input id="name" name="name" type="text" autocomplete="name" value="${options.name ?? ''}" maxlength="100">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="email" required value="${options.email ?? ''}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" aria-describedby="password-hint">
    <p class="hint" id="password-hint">At least ${PASSWORD_MIN} characters.</p>
    ${options.invitation
      ? ''
      : html`<label for="organizationName">Organization name</label>
        <input id="organizationName" name="organizationName" type="text" maxlength="100" value="${options.organizationName ?? ''}" placeholder="My organization">`}
    <button type="submit">Create account</button>
  </form>
  <p>Already have an account? <a href="${withNext('/login', options.next)}">Log in</a></p>`;
}

async function renderSignUp(services: Services, request: Request, response: Response, error?: string, status = 200): Promise<void> {
  const { csrf } = consoleLocals(response);
  const source = request.method === 'GET' ? request.query : request.body;
  const invitation = invitationToken(field(source, 'invitation'));
  const next = safeNext(field(source, 'next'));
  const flash = error ? { kind: 'error' as const, text: error } : undefined;
  let heading = 'Sign up';
  let intro: Markup;
  if (invitation) {
    try {
      const described = await describeInvitation(services.orm.em.fork(), invitation, services.now());
      if (described.setup) heading = 'Create the owner account';
      intro = described.setup
        ? html`<p>This setup link makes you an owner of <strong>${described.organizationName}</strong>. It works once.</p>`
        : html`<p>You were invited to join <strong>${described.organizationName}</strong> as ${described.role}.</p>`;
    } catch (raw) {
      return sendPage(response, { title: 'Sign up', csrf, status: 400, flash: { kind: 'error', text: sentence(clientError(raw)) } }, html`<div class="narrow"><h1>Sign up</h1><p><a href="${withNext('/login', next)}">Log in</a></p></div>`);
    }
  } else if (services.config.allowSignup) {
    intro = html`<p>Create an account and a new organization of your own.</p>`;
  } else {
    return sendPage(
      response,
      { title: 'Sign up', csrf, status: status === 200 ? signUpClosed().status : status, flash },
      html`<div class="narrow"><h1>Sign-up is by invitation</h1><p>Open the invitation link an owner of your organization sent you, or paste it here.</p>
      <form method="get" action="/signup" class="card">
        ${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
        <label for="invitation">Invitation or setup link</label>
        <input id="invitation" name="invitation" type="text" required autocomplete="off" placeholder="https://…/invite/…">
        <button type="submit">Continue</button>
      </form>
      <p>Setting up a new Herald? Open the setup link it printed when it first started, or print a new one on the server with
      <code>npm run herald -- setup-link</code>.</p><p><a href="${withNext('/login', next)}">Log in</a></p></div>`,
    );
  }
  const body = (request.body ?? {}) as Record<string, unknown>;
  sendPage(
    response,
    { title: 'Sign up', csrf, status, flash },
    html`<div class="narrow"><h1>${heading}</h1>${intro}${signUpForm(csrf, {
      invitation,
      next,
      email: field(body, 'email'),
      name: field(body, 'name'),
      organizationName: field(body, 'organizationName'),
    })}</div>`,
  );
}

function loginPage(response: Response, options: { next?: string; email?: string; error?: string; status?: number; allowSignup: boolean }): void {
  const { csrf } = consoleLocals(response);
  sendPage(
    response,
    { title: 'Log in', csrf, status: options.status, flash: options.error ? { kind: 'error', text: options.error } : undefined },
    html`<div class="narrow"><h1>Log in</h1>
    <form method="post" action="/login" class="card">
      ${csrfField(csrf)}
      ${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : ''}
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit">Log in</button>
    </form>
    <p>New here? <a href="${withNext('/signup', options.next)}">Sign up</a>${options.allowSignup ? '' : ' (with the invitation or setup link you were sent)'}.</p></div>`,
  );
}

export function authPages(router: Router, services: Services): void {
  router.get('/', (_request, response) => {
    response.redirect(303, consoleLocals(response).signedIn ? '/channels' : '/login');
  });

  router.get('/signup', async (request, response) => {
    await renderSignUp(services, request, response);
  });

  router.post('/signup', async (request, response) => {
    try {
      const body = request.body as Record<string, unknown>;
      const limit = await consumeRateLimit(services.orm.em.fork(), `signup-address:${request.ip ?? ''}`, 'signup', SIGNUPS_PER_ADDRESS_PER_HOUR, services.now());
      if (!limit.allowed) {
        response.setHeader('Retry-After', String(limit.resetSeconds));
        throw new DomainError('rate_limited', 'Too many sign-ups from your address.', { hint: `Try again in ${Math.ceil(limit.resetSeconds / 60)} minutes.` });
      }
      const { user, organizationId } = await signUp(
        services.orm.em.fork(),
        {
          email: field(body, 'email'),
          password: field(body, 'password'),
          name: field(body, 'name'),
          organizationName: field(body, 'organizationName'),
          invitationToken: invitationToken(field(body, 'invitation')),
        },
        { allowSignup: services.config.allowSignup, now: services.now() },
      );
      const token = await createSession(services.orm.em.fork(), user.id, organizationId, services.now());
      setSessionCookie(services, request, response, token);
      response.redirect(303, safeNext(field(body, 'next')) ?? '/channels');
    } catch (raw) {
      const error = clientError(raw);
      await renderSignUp(services, request, response, sentence(error), error.status);
    }
  });

  router.get('/login', (request, response) => {
    if (consoleLocals(response).signedIn) return response.redirect(303, safeNext(request.query.next) ?? '/channels');
    loginPage(response, { next: safeNext(request.query.next), allowSignup: services.config.allowSignup });
  });

  router.post('/login', async (request, response) => {
    const email = normalizeEmail(field(request.body, 'email'));
    const nextPath = safeNext(field(request.body, 'next'));
    const em = services.orm.em.fork();
    // Counted before the password is checked, known email or not, so the limit reveals nothing either.
    const perEmail = await consumeRateLimit(em, `login-email:${sha256(email)}`, 'login', LOGIN_PER_EMAIL_PER_HOUR, services.now());
    const perAddress = await consumeRateLimit(em, `login-address:${request.ip ?? ''}`, 'login', LOGIN_PER_ADDRESS_PER_HOUR, services.now());
    if (!perEmail.allowed || !perAddress.allowed) {
      const minutes = Math.ceil(Math.max(perEmail.allowed ? 0 : perEmail.resetSeconds, perAddress.allowed ? 0 : perAddress.resetSeconds) / 60);
      response.setHeader('Retry-After', String(minutes * 60));
      return loginPage(response, { allowSignup: services.config.allowSignup, next: nextPath, email, status: 429, error: `Too many log-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` });
    }
    const user = await authenticate(em, email, field(request.body, 'password'));
    if (!user) return loginPage(response, { allowSignup: services.config.allowSignup, next: nextPath, email, status: 401, error: 'Email or password is incorrect.' });
    const organizations = await organizationsOf(em, user.id);
    const token = await createSession(em, user.id, organizations[0]?.id ?? null, services.now());
    setSessionCookie(services, request, response, token);
    response.redirect(303, nextPath ?? '/channels');
  });

  router.post('/logout', async (request, response) => {
    await endSession(services.orm.em.fork(), consoleLocals(response).sessionToken);
    clearSessionCookie(services, request, response);
    response.redirect(303, '/login');
  });

  router.post('/organization', requireSignedIn, async (request, response) => {
    const signedIn = consoleLocals(response).signedIn!;
    const em = services.orm.em.fork();
    await switchOrganization(em, signedIn.session, field(request.body, 'organizationId'));
    response.redirect(303, '/channels');
  });

  // An invitation link: new people sign up with it, logged-in people join with one click.
  router.get('/invite/:token', async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const token = String(request.params.token);
    if (!signedIn) return response.redirect(303, `/signup?invitation=${encodeURIComponent(token)}`);
    const described = await describeInvitation(services.orm.em.fork(), token, services.now());
    sendPage(
      response,
      { title: 'Invitation', signedIn, csrf },
      html`<div class="narrow"><h1>Join ${described.organizationName}</h1><p>You were invited as ${described.role}.</p>
      <form method="post" action="/invite/${token}">${csrfField(csrf)}<button type="submit">Join ${described.organizationName}</button></form></div>`,
    );
  });

  router.post('/invite/:token', requireSignedIn, async (request, response) => {
    const signedIn = consoleLocals(response).signedIn!;
    const em = services.orm.em.fork();
    const organizationId = await acceptInvitation(em, String(request.params.token), signedIn.user.id, services.now());
    await switchOrganization(em, signedIn.session, organizationId);
    response.redirect(303, '/channels');
  });
}
