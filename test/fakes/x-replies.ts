// The replies, hiding and deleting of the fake X (test/fakes/x.ts), kept apart so that file stays readable; each route goes
// through the same OpenAPI contract check (`route`). References (2026-11-27): https://docs.x.com/x-api/posts/search/introduction,
// /x-api/posts/hide-replies/introduction, developer.x.com/en/docs/x-api/tweets/manage-tweets/api-reference/delete-tweets-id,
// and the OpenAPI 2.167 operations searchPostsRecent, hidePostsReply, deletePosts.
import type { FakeHandler, FakeReply, RecordedRequest } from '../helpers/fake-server.js';
import type { XFakePost } from './x.js';

export interface ReplyRouteDeps {
  route: (method: string, path: string, handler: FakeHandler) => void;
  authed: (handler: (request: RecordedRequest, subject: string) => FakeReply | Promise<FakeReply>) => FakeHandler;
  problem: (status: number, title: string, detail: string, type?: string) => FakeReply;
  invalid: (detail: string) => FakeReply;
  posts: XFakePost[];
  user: { id: string; name: string; username: string };
  others: { id: string; name: string; username: string }[];
  serverUrl: string;
  postView: (post: XFakePost, fields: string[]) => Record<string, unknown>;
  accessLevel: () => 'free' | 'basic';
  scopesOf: (request: RecordedRequest) => string[];
}

export function addReplyRoutes({ route, authed, problem, invalid, posts, user, others, serverUrl, postView, accessLevel, scopesOf }: ReplyRouteDeps): void {
  const userOf = (id: string) => (id === user.id ? user : others.find((other) => other.id === id));
  const forbidden = (detail: string) => problem(403, 'Forbidden', detail);

  route('GET', '/2/tweets/search/recent', authed((request) => {
    if (accessLevel() === 'free') {
      // X's answer to an app whose access level does not include the endpoint.
      return {
        status: 403,
        json: {
          client_id: '12345678',
          detail: 'When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens from a Twitter developer App that is attached to a Project. You can create a project via the developer portal.',
          registration_url: 'https://developer.twitter.com/en/docs/projects/overview',
          title: 'Client Forbidden',
          required_enrollment: 'Appropriate Level of API Access',
          reason: 'client-not-enrolled',
          type: 'https://api.twitter.com/2/problems/client-forbidden',
        },
      };
    }
    const conversation = /^conversation_id:(\d{1,19})$/.exec(request.query.get('query') ?? '')?.[1];
    if (!conversation) return invalid('this fake answers only query=conversation_id:<post id>');
    const max = Number(request.query.get('max_results') ?? 10);
    const weekAgo = Date.now() - 7 * 86_400_000;
    const since = request.query.get('start_time');
    if (since && Date.parse(since) < weekAgo) return invalid(`Invalid 'start_time':'${since}'. 'start_time' must be on or after ${new Date(weekAgo).toISOString()}`);
    const fields = (request.query.get('tweet.fields') ?? '').split(',');
    const matching = [...posts]
      .reverse()
      .filter((post) => post.conversation_id === conversation && Date.parse(post.created_at) >= Math.max(weekAgo, since ? Date.parse(since) : 0));
    const offset = Number(request.query.get('next_token')?.replace(/^page-/, '') ?? 0);
    const list = matching.slice(offset, offset + max);
    const withUsers = (request.query.get('expansions') ?? '').split(',').includes('author_id');
    const userFields = (request.query.get('user.fields') ?? '').split(',');
    const authors = [...new Set(list.map((post) => post.author_id))].map((id) => userOf(id)!);
    const includes = withUsers ? { users: authors.map((author) => ({ id: author.id, name: author.name, username: author.username, ...(userFields.includes('profile_image_url') ? { profile_image_url: `${serverUrl}/profile_images/${author.id}_normal.jpg` } : {}) })) } : undefined;
    const more = matching.length > offset + max;
    return { json: { ...(list.length > 0 ? { data: list.map((post) => postView(post, fields)) } : {}), ...(includes && list.length > 0 ? { includes } : {}), meta: { result_count: list.length, ...(more ? { next_token: `page-${offset + max}` } : {}) } } };
  }));

  route('PUT', '/2/tweets/*/hidden', authed((request) => {
    if (!scopesOf(request).includes('tweet.moderate.write')) return forbidden('Forbidden');
    const reply = posts.find((post) => post.id === request.path.split('/')[3]);
    if (!reply) return problem(404, 'Not Found Error', 'Could not find tweet.', 'https://api.twitter.com/2/problems/resource-not-found');
    const root = posts.find((post) => post.id === reply.conversation_id);
    if (!root || root.id === reply.id || root.author_id !== user.id) return forbidden('You can only hide or unhide replies to conversations you authored.');
    reply.hidden = request.json.hidden;
    return { json: { data: { hidden: reply.hidden } } };
  }));

  route('DELETE', '/2/tweets/*', authed((request) => {
    const index = posts.findIndex((post) => post.id === request.path.split('/')[3]);
    if (index < 0) return problem(404, 'Not Found Error', 'Could not find tweet.', 'https://api.twitter.com/2/problems/resource-not-found');
    if (posts[index].author_id !== user.id) return forbidden('You are not allowed to delete a Tweet that is not yours.');
    posts.splice(index, 1);
    return { json: { data: { deleted: true } } };
  }));
}
