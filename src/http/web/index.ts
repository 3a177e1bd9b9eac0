// The web console: server-rendered pages with forms that work without JavaScript. Errors become HTML pages here.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { asDomainError } from '../../errors.js';
import type { Services } from '../../../tools/types.js';
import type { McpSessions } from '../../mcp/sessions.js';
import { authPages } from './auth-pages.js';
import { channelPages } from './channel-pages.js';
import { html, sendPage } from './html.js';
import { CONSOLE_CSS } from './console-style.js';
import { PLATFORM_PREVIEW_STYLE } from './platform-preview.js';
import { CONSOLE_SCRIPT } from './console-script.js';
import { composePages } from './compose-pages.js';
import { movePages } from './move-pages.js';
import { settingsPages } from './settings-pages.js';
import { csrfFromQuery, isConsoleMultipart } from './multipart.js';
import { oauthPages } from './oauth-pages.js';
import { consolePages } from './pages.js';
import { devicePages } from './device-pages.js';
import { postPages } from './post-pages.js';
import { calendarPages } from './calendar-pages.js';
import { approvalPages } from './approval-pages.js';
import { consoleLocals, consoleSession } from './session.js';
import { webhookPages } from './webhook-pages.js';
import { feedPages } from './feed-pages.js';
import { recurringPages } from './recurring-pages.js';
import { apiReferencePage } from './api-reference-page.js';
import { chartPages } from './chart-pages.js';
import { commentPages } from './comment-pages.js';
import { overviewPages } from './overview-pages.js';
import { activityPages } from './activity-pages.js';
import { FAVICON_SVG, homePages } from './home-pages.js';
import { mediaPages } from './media-pages.js';
import { importPages } from './import-pages.js';
import { setPages } from './set-pages.js';
import { previewLinkPages, previewLinkPublicRoutes } from './preview-link-pages.js';

export function consoleRouter(services: Services, sessions: McpSessions): Router {
  const router = express.Router();
  // API paths are not console pages, except the channel OAuth callback the browser lands on; nor is a POST that is not a
  // console form (JSON to a wrong path gets the JSON 404, not "the form expired").
  router.use((request: Request, _response: Response, next: NextFunction) => {
    if (request.path.startsWith('/api/') && !request.path.startsWith('/api/integrations/social/')) return next('router');
    if (request.method !== 'GET' && request.method !== 'HEAD' && !request.is('application/x-www-form-urlencoded') && !isConsoleMultipart(request)) return next('router');
    next();
  });
  router.get('/console.css', (_request, response) => {
    response.type('text/css').setHeader('Cache-Control', 'public, max-age=3600').send(CONSOLE_CSS + PLATFORM_PREVIEW_STYLE);
  });
  router.get('/favicon.ico', (_request, response) => {
    response.type('image/svg+xml').setHeader('Cache-Control', 'public, max-age=86400').send(FAVICON_SVG);
  });
  router.get('/console.js', (_request, response) => {
    response.type('text/javascript').setHeader('Cache-Control', 'public, max-age=3600').send(CONSOLE_SCRIPT);
  });
  // The live preview sends the whole compose form (every channel's text and settings): more fields than other forms.
  router.use('/compose/preview', express.urlencoded({ extended: false, limit: '1mb', parameterLimit: 2000 }));
  // An import's confirmation carries the file's text (up to 2 MB, escaped).
  router.use('/posts/import', express.urlencoded({ extended: false, limit: '8mb', parameterLimit: 20 }));
  router.use(express.urlencoded({ extended: false, limit: '100kb', parameterLimit: 100 }));
  router.use(csrfFromQuery);
  // Customer preview links: public pages without the console's session or cookies (their forms carry the link's own token).
  router.use(previewLinkPublicRoutes(services));
  router.use(consoleSession(services));
  homePages(router, services);
  authPages(router, services);
  channelPages(router, services);
  chartPages(router, services);
  overviewPages(router, services);
  commentPages(router, services);
  consolePages(router, services, sessions);
  // Before postPages: /posts/import is not a post id.
  importPages(router, services);
  setPages(router, services);
  postPages(router, services);
  activityPages(router, services);
  calendarPages(router, services);
  movePages(router, services);
  composePages(router, services);
  mediaPages(router, services);
  settingsPages(router, services);
  approvalPages(router, services);
  previewLinkPages(router, services);
  oauthPages(router, services, sessions);
  devicePages(router, services);
  webhookPages(router, services);
  feedPages(router, services);
  recurringPages(router, services);
  apiReferencePage(router, services);
  router.use((raw: unknown, request: Request, response: Response, _next: NextFunction) => {
    const error = asDomainError(raw);
    if (error.code === 'internal') services.logger.error({ err: raw, requestId: response.locals.requestId, path: request.path }, 'console error');
    if (response.headersSent) return;
    const locals = consoleLocals(response);
    sendPage(
      response,
      { title: 'Error', signedIn: locals.signedIn, csrf: locals.csrf ?? '', status: error.status },
      html`<div class="narrow"><h1>Something is not right</h1><p class="flash error" role="alert">${error.message}</p>${error.hint ? html`<p>${error.hint}</p>` : ''}
      <p class="hint">Request id: ${String(response.locals.requestId ?? '')}</p><p><a href="/">Back to the console</a></p></div>`,
    );
  });
  return router;
}
