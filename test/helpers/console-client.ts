// A cookie-keeping HTTP client that uses the console the way a browser without JavaScript does: GET a page, read the
// CSRF token of its forms, POST the form. Redirects are not followed, so tests see them.
export interface Page {
  status: number;
  text: string;
  location?: string;
  headers: Headers;
}

export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  lastPage?: Page;

  constructor(readonly baseUrl: string) {}

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: string, path: string, body?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Page> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      redirect: 'manual',
      headers: {
        ...(this.cookies.size ? { cookie: this.cookieHeader() } : {}),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: body ? new URLSearchParams(Object.entries(body).flatMap(([key, value]) => (Array.isArray(value) ? value : [value]).map((item) => [key, item]))).toString() : undefined,
    });
    this.remember(response.headers);
    const page: Page = { status: response.status, text: await response.text(), location: response.headers.get('location') ?? undefined, headers: response.headers };
    if (method === 'GET') this.lastPage = page;
    return page;
  }

  get(path: string): Promise<Page> {
    return this.request('GET', path);
  }

  /** The CSRF token of the forms on a page (the last GET page by default). */
  csrf(page = this.lastPage): string {
    const match = page ? /name="_csrf" value="([^"]+)"/.exec(page.text) : null;
    if (!match) throw new Error(`No CSRF token on the page (status ${page?.status}): ${page?.text.slice(0, 300)}`);
    return match[1];
  }

  /** GETs `from` (to read its CSRF token), then POSTs the form to `action`. */
  async submit(from: string, action: string, fields: Record<string, string | string[]> = {}, headers: Record<string, string> = {}): Promise<Page> {
    const page = await this.get(from);
    return this.request('POST', action, { _csrf: this.csrf(page), ...fields }, headers);
  }

  /** Follows a redirect answer (Post/Redirect/Get) to the page it points at. */
  async follow(page: Page): Promise<Page> {
    if (page.status < 300 || page.status >= 400 || !page.location) throw new Error(`Expected a redirect, got ${page.status}: ${page.text.slice(0, 300)}`);
    return this.get(page.location);
  }

  async submitAndFollow(from: string, action: string, fields: Record<string, string> = {}): Promise<Page> {
    return this.follow(await this.submit(from, action, fields));
  }

  /**
   * Sends the compose form as its page does (multipart, the CSRF token of `from` in the query string), with files when
   * given: the answer, redirects not followed.
   */
  async sendCompose(from: string, fields: [string, string][], files: { field: string; name: string; bytes: Uint8Array; type?: string }[] = []): Promise<Page> {
    const page = await this.get(from);
    const csrf = this.csrf(page);
    const form = new FormData();
    form.append('_csrf', csrf);
    for (const [name, value] of fields) form.append(name, value);
    for (const file of files) form.append(file.field, new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type ?? 'image/png' }), file.name);
    const response = await fetch(new URL(`/compose?_csrf=${encodeURIComponent(csrf)}`, this.baseUrl), { method: 'POST', redirect: 'manual', headers: { cookie: this.cookieHeader() }, body: form });
    this.remember(response.headers);
    return { status: response.status, text: await response.text(), location: response.headers.get('location') ?? undefined, headers: response.headers };
  }

  async signUp(fields: { email: string; password: string; name?: string; organizationName?: string; invitation?: string }): Promise<Page> {
    const from = fields.invitation ? `/signup?invitation=${encodeURIComponent(fields.invitation)}` : '/signup';
    const { invitation, ...rest } = fields;
    return this.submit(from, '/signup', { name: '', organizationName: '', ...rest, ...(invitation ? { invitation } : {}) } as Record<string, string>);
  }

  /**
   * Approves an OAuth authorization as the signed-in person would: opens the consent screen of `authorizationUrl` and
   * presses Approve. Answers the consent page and the redirect's location (to the client's callback).
   */
  async approveConsent(authorizationUrl: string): Promise<{ page: Page; location: string | undefined }> {
    const authorization = new URL(authorizationUrl);
    const page = await this.get(authorization.pathname + authorization.search);
    const hidden = Object.fromEntries([...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1], match[2].replace(/&amp;/g, '&')]));
    const approved = await this.request('POST', '/oauth/authorize', { ...hidden, action: 'approve' });
    return { page, location: approved.status === 303 ? approved.location : undefined };
  }

  async logIn(email: string, password: string): Promise<Page> {
    return this.submit('/login', '/login', { email, password });
  }
}

/** Pulls the text of an element with this id out of a page. */
export function textOf(page: Page, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(page.text);
  if (!match) throw new Error(`No element #${id} on the page: ${page.text.slice(0, 500)}`);
  return match[1].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'");
}
