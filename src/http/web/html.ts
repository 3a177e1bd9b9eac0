// Server-rendered HTML: a tagged template that escapes every interpolation unless it is already markup, and the page layout.
import type { Response } from 'express';
import { asDomainError, type DomainError } from '../../errors.js';
import type { SignedIn } from '../../../tools/internal/accounts.js';

export class Markup {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => ESCAPES[character]);

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
  /** Same-origin scripts and stylesheets of the page (charts hydrating their tables); the page works without them. */
  assets?: { scripts?: string[]; styles?: string[] };
}

const NAV: [string, string][] = [
  ['channels', 'Channels'],
  ['posts', 'Posts'],
  ['calendar', 'Calendar'],
  ['approvals', 'Approvals'],
  ['developer', 'Developer'],
  ['webhooks', 'Webhooks'],
  ['apps', 'OAuth apps'],
  ['approved', 'Approved apps'],
  ['notifications', 'Notifications'],
  ['members', 'Members'],
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
    <a class="brand" href="/channels">Herald</a>
    <nav aria-label="Console"><ul>${NAV.map(
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
${(options.assets?.styles ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
${(options.assets?.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${header(options)}
<main id="main">
${options.flash ? html`<p class="flash ${options.flash.kind}" role="${options.flash.kind === 'error' ? 'alert' : 'status'}">${options.flash.text}</p>` : ''}
${body}
</main>
</body>
</html>`;
  response
    .status(options.status ?? 200)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('X-Frame-Options', 'DENY')
    .setHeader('Content-Security-Policy', `default-src 'none'; style-src 'self'; img-src https: http: data:;${options.assets?.scripts?.length ? " script-src 'self';" : ''} frame-ancestors 'none'; base-uri 'none'`)
    .type('html')
    .send(page.value);
}

export const CONSOLE_CSS = `
:root{--fg:#1b1f24;--muted:#59636e;--bg:#f6f8fa;--card:#fff;--line:#d1d9e0;--accent:#0b5cad;--danger:#b3261e;--ok:#1a7f37;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}body{margin:0}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f0b400;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:10}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:center;padding:10px 24px;background:var(--card);border-bottom:1px solid var(--line)}
.brand{font-weight:700;font-size:1.2rem;text-decoration:none;color:var(--fg)}
.top nav ul{display:flex;flex-wrap:wrap;gap:4px 16px;list-style:none;margin:0;padding:0}
.top nav a{text-decoration:none;padding:4px 2px}.top nav a[aria-current=page]{font-weight:700;border-bottom:2px solid var(--accent)}
.who{margin-left:auto;display:flex;gap:10px;align-items:center;color:var(--muted);font-size:.9rem}
main{max-width:1040px;margin:0 auto;padding:24px}
h1{font-size:1.5rem;margin:0 0 16px}h2{font-size:1.15rem;margin:28px 0 10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:0 0 16px}
.narrow{max-width:440px;margin:40px auto}
label{display:block;font-weight:600;margin:12px 0 4px}
.hint{color:var(--muted);font-size:.875rem;margin:2px 0 0}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=week],input[type=time],select,textarea{width:100%;max-width:100%;padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit;background:#fff}
textarea{min-height:80px}
button,.button{display:inline-block;margin-top:14px;padding:8px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--danger);border-color:var(--danger)}
form.inline{display:inline}form.inline button{margin-top:0}
table{width:100%;border-collapse:collapse;background:var(--card)}th,td{text-align:left;padding:8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;color:var(--muted);font-weight:600}
.avatar{width:32px;height:32px;border-radius:50%;object-fit:cover;vertical-align:middle;background:var(--line)}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:.8rem;font-weight:600;background:#eaeef2}
.badge.ok{background:#dafbe1;color:#116329}.badge.warn{background:#fff8c5;color:#7d4e00}.badge.error{background:#ffebe9;color:#a40e26}
.flash{padding:10px 14px;border-radius:6px}.flash.ok{background:#dafbe1}.flash.error{background:#ffebe9}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}pre{background:#eaeef2;padding:12px;border-radius:6px;overflow:auto;white-space:pre-wrap;word-break:break-all}
.secret{font-size:1rem;background:#fff8c5;padding:8px;border-radius:6px;word-break:break-all;display:block}
.grid{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:8px}
.actions{display:flex;flex-wrap:wrap;gap:8px;align-items:center}.actions form{margin:0}.actions button{margin-top:0}
details{margin-top:8px}summary{cursor:pointer;color:var(--accent)}
.consent ul{padding-left:20px}.app-head{display:flex;gap:12px;align-items:center}.app-logo{width:48px;height:48px;border-radius:8px;object-fit:cover}
.initial{width:48px;height:48px;border-radius:8px;background:var(--accent);color:#fff;display:flex;align-items:center;justify-content:center;font-size:1.5rem;font-weight:700}
.calendar{table-layout:fixed}.calendar td{height:96px;padding:4px;font-size:.8rem}.calendar td.outside{background:var(--bg);color:var(--muted)}.calendar td.today{outline:2px solid var(--accent);outline-offset:-2px}
.calendar ul{list-style:none;margin:4px 0 0;padding:0}.calendar .entry{margin:0 0 4px;padding:2px 4px;border-left:3px solid var(--line);overflow-wrap:anywhere}
.calendar .entry.failed{border-left-color:var(--danger);background:#ffebe9}.calendar .entry.status-awaiting_approval{border-left-color:#bf8700;background:#fff8c5}.calendar .excerpt{display:block;color:var(--muted)}
.day-number{font-weight:700}.failed-summary{border-color:var(--danger)}
.preview-list{list-style:none;padding:0}.preview-item.over{border-color:var(--danger)}.preview-head{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 8px}
.preview-text{white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid var(--line);font-family:system-ui,sans-serif;font-size:.95rem}
.length{color:var(--muted);font-size:.85rem}.length.over{color:var(--danger);font-weight:700}
.media-list{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:8px}.media-list img{max-width:160px;max-height:160px;border-radius:6px;border:1px solid var(--line)}
.card>h2:first-of-type,.card>h3:first-of-type{margin-top:0}.approval{border-color:#bf8700}form.reject{display:flex;flex-wrap:wrap;gap:8px;align-items:end}form.reject label{margin:0}form.reject input{max-width:320px}
fieldset{border:1px solid var(--line);border-radius:6px;margin:12px 0;padding:8px 12px}input[type=datetime-local],input[type=month]{padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit}
`;

/** A client mistake, to show on the form it came from; anything else (a bug, the database) is rethrown for the error page. */
export function clientError(raw: unknown): DomainError {
  const error = asDomainError(raw);
  if (error.code === 'internal') throw raw;
  return error;
}

/** What is wrong and what to do, as one sentence for a form. */
export const sentence = (error: DomainError) => [error.message, error.hint].filter(Boolean).join(' ');
