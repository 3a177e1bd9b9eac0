// Server-rendered HTML: a tagged template that escapes every interpolation unless it is already markup, and the page layout.
import type { Response } from 'express';
import { asDomainError, type DomainError } from '../../errors.js';
import type { SignedIn } from '../../../tools/internal/accounts.js';
// A cycle (zones.ts writes its times with html``), safe because neither module calls the other while loading.
import { localTimes } from './zones.js';

export class Markup {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const SPECIAL = /[&<>"']/;
// Most interpolations (ids, names, times) have nothing to escape: they are returned as they are, without a new string.
export const escapeHtml = (value: string) => (SPECIAL.test(value) ? value.replace(/[&<>"']/g, (character) => ESCAPES[character]) : value);

type Value = Markup | string | number | boolean | null | undefined | Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (value instanceof Markup) return value.value;
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0];
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1];
  });
  return new Markup(out);
}

/** Only http(s) URLs become links or images; anything else (javascript:, data:) renders as nothing. */
export const safeUrl = (url: string | null | undefined) => (url && /^https?:\/\//i.test(url) ? url : undefined);

export interface PageOptions {
  title: string;
  signedIn?: SignedIn;
  csrf: string;
  /** Which navigation entry is current. */
  section?: string;
  flash?: { kind: 'ok' | 'error'; text: string };
  status?: number;
  /**
   * The zone the page shows times in and where it came from: the script compares it with the browser's zone, so a
   * person without a zone of their own sees their browser's from the next page on.
   */
  zone?: { name: string; source: 'person' | 'browser' | 'organization' };
  /** false for a page that must work as plain HTML alone (the API reference). */
  script?: boolean;
  /** Same-origin scripts and stylesheets of the page (charts hydrating their tables); the page works without them. */
  assets?: { scripts?: string[]; styles?: string[] };
}

// Daily work first; the tools a developer sets up once are a group of their own.
const NAV: [string, string][] = [
  ['compose', 'New post'],
  ['posts', 'Posts'],
  ['calendar', 'Calendar'],
  ['feeds', 'Feeds'],
  ['recurring-posts', 'Recurring'],
  ['approvals', 'Approvals'],
  ['preview-links', 'Preview links'],
  ['comments', 'Comments'],
  ['analytics', 'Analytics'],
  ['channels', 'Channels'],
  ['media', 'Media'],
  ['notifications', 'Notifications'],
  ['activity', 'Activity'],
  ['members', 'Members'],
  ['settings', 'Settings'],
];
const DEVELOPER_NAV: [string, string][] = [
  ['developer', 'Developer'],
  ['webhooks', 'Webhooks'],
  ['apps', 'OAuth apps'],
  ['approved', 'Approved apps'],
];

export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** The organization a consent is for: a choice when the person belongs to several (the current one chosen), else named. */
export const organizationField = (signedIn: SignedIn, id: string) =>
  signedIn.organizations.length > 1
    ? html`<label for="${id}">For organization</label><select id="${id}" name="organizationId">${signedIn.organizations.map(
        (item) => html`<option value="${item.id}"${item.id === signedIn.organization?.id ? html` selected` : ''}>${item.name}</option>`,
      )}</select>`
    : html`<p>Organization: <strong>${signedIn.organization?.name}</strong></p><input type="hidden" name="organizationId" value="${signedIn.organization?.id ?? ''}">`;

/** The two buttons of a consent form. */
export const consentActions = () =>
  html`<div class="actions"><button type="submit" name="action" value="approve">Authorize</button>
        <button type="submit" name="action" value="deny" class="secondary">Deny</button></div>`;

function header(options: PageOptions): Markup {
  const signedIn = options.signedIn;
  if (!signedIn) return html`<header class="top"><a class="brand" href="/">Herald</a></header>`;
  const organizations = signedIn.organizations;
  return html`<header class="top">
    <a class="brand" href="/">Herald</a>
    <nav aria-label="Console"><ul>${NAV.map(
      ([key, label]) => html`<li><a href="/${key}"${options.section === key ? html` aria-current="page"` : ''}>${label}</a></li>`,
    )}</ul>
    <ul class="developer-nav" aria-label="Developer tools">${DEVELOPER_NAV.map(
      ([key, label]) => html`<li><a href="/${key}"${options.section === key ? html` aria-current="page"` : ''}>${label}</a></li>`,
    )}</ul></nav>
    <div class="who">
      ${organizations.length > 1
        ? html`<form method="post" action="/organization" class="inline">${csrfField(options.csrf)}
            <label for="organization-switch" class="visually-hidden">Organization</label>
            <select id="organization-switch" name="organizationId">${organizations.map(
              (item) => html`<option value="${item.id}"${item.id === signedIn.organization?.id ? html` selected` : ''}>${item.name}</option>`,
            )}</select>
            <button type="submit" class="secondary">Switch</button></form>`
        : html`<span>${signedIn.organization?.name ?? ''}</span>`}
      <span class="email">${signedIn.user.email}</span>
      <form method="post" action="/logout" class="inline">${csrfField(options.csrf)}<button type="submit" class="secondary">Log out</button></form>
    </div>
  </header>`;
}

export function sendPage(response: Response, options: PageOptions, body: Markup): void {
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${options.title} · Herald</title>
<link rel="stylesheet" href="/console.css">
${options.script === false ? '' : html`<script src="/console.js" defer></script>`}
${(options.assets?.styles ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
${(options.assets?.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body${options.zone ? html` data-zone="${options.zone.name}" data-zone-source="${options.zone.source}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
${header(options)}
<main id="main">
${options.flash ? html`<p class="flash ${options.flash.kind}" role="${options.flash.kind === 'error' ? 'alert' : 'status'}">${options.zone ? localTimes(options.flash.text, options.zone.name) : options.flash.text}</p>` : ''}
${body}
</main>
</body>
</html>`;
  response
    .status(options.status ?? 200)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('X-Frame-Options', 'DENY')
    .setHeader(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src https: http: data:; frame-ancestors 'none'; base-uri 'none'",
    )
    .type('html')
    .send(page.value);
}


/** A client mistake, to show on the form it came from; anything else (a bug, the database) is rethrown for the error page. */
export function clientError(raw: unknown): DomainError {
  const error = asDomainError(raw);
  if (error.code === 'internal') throw raw;
  return error;
}

// What the API tells a program to send, as a person does it on the console's forms.
const FORM_WORDS: [RegExp, string][] = [
  [/send allowDuplicate: true if posting it (again|twice) is intended/g, 'tick "Posting this text again on purpose" if posting it $1 is intended.'],
  [/^Fix each listed channel entry and send the whole request again; nothing was created\.$/, 'Nothing was created: fix what is named and send the form again.'],
];
const formWords = (text: string) => FORM_WORDS.reduce((out, [api, form]) => out.replace(api, form), text);

/** What is wrong and what to do, as one sentence for a form (in the form's words, not the API's). */
export const sentence = (error: DomainError) => [error.message, error.hint].filter(Boolean).map((part) => formWords(part!)).join(' ');
