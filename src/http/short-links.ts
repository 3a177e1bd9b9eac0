// PUBLIC_URL/l/<code>: Herald's short links. A redirect that counts one click per day and link; nothing about the visitor
// (address, agent, referrer) is stored.
import express, { type Request, type Response, type Router } from 'express';
import type { Services } from '../../tools/types.js';
import { followShortLink } from '../../tools/internal/short-links.js';

export function shortLinkRouter(services: Services): Router {
  const router = express.Router();
  router.get('/l/:code', async (request: Request, response: Response) => {
    // HEAD (link checkers) follows the link without counting.
    const target = await followShortLink(services.orm.em.fork(), String(request.params.code), request.get('user-agent'), services.now(), request.method === 'GET');
    response.setHeader('Cache-Control', 'no-store');
    if (!target) {
      response.status(404).type('text/plain').send('This short link does not exist.');
      return;
    }
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.redirect(302, target);
  });
  return router;
}
