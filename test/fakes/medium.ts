// A fake Medium API (v1, as documented in Medium/medium-api-docs README 3.3, read 2026-11) on 127.0.0.1, built on startFakeServer.
//
//   const medium = await startMediumFake();          // medium.token is the only integration token accepted
//   SOCIAL_ENDPOINTS={"medium":{"api": medium.url}}
//   medium.posts                                     // every post created: where, the JSON body as received
//   medium.downloads                                 // every picture Medium side-loaded from the content: url, status, bytes
//
// Routes (`Authorization: Bearer <token>`, else 401 {errors: [{message: "Token was invalid.", code: 6003}]}):
//   GET  /v1/me                                  {data: user}
//   GET  /v1/users/:id/publications              {data: [publication]}; 403 for another user
//   GET  /v1/publications/:id/contributors       {data: [{publicationId, userId, role}]}
//   POST /v1/users/:authorId/posts               201 {data: post}; 403 when authorId is not the token's user; 400 when title,
//                                                 contentFormat (html|markdown) or content is missing or wrong, or publishStatus is
//                                                 not public|draft|unlisted. Medium drops tags after the third and tags over 25
//                                                 characters; this fake refuses them (400) so that a test notices them being sent.
//   POST /v1/publications/:id/posts              the same, in a publication: 403 unless the user is a writer or an editor, and a
//                                                 writer may only create a draft
// Like Medium, the fake side-loads every Markdown image of the content by GETting its URL.
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { startFakeServer } from '../helpers/fake-server.js';

export interface MediumFakePost {
  id: string;
  publicationId?: string;
  body: Record<string, unknown>;
  url: string;
}

export interface MediumFake {
  server: FakeServer;
  url: string;
  token: string;
  user: { id: string; username: string; name: string; url: string; imageUrl: string };
  publications: { id: string; name: string; description: string; url: string; imageUrl: string; role?: 'editor' | 'writer' }[];
  posts: MediumFakePost[];
  downloads: { url: string; status: number; bytes: Buffer }[];
  close(): Promise<void>;
}

const failure = (status: number, message: string, code: number): FakeReply => ({ status, json: { errors: [{ message, code }] } });

export async function startMediumFake(): Promise<MediumFake> {
  const server = await startFakeServer();
  const token = '181d415f34379af07b2c11d144dfbe35d';
  const user = { id: '5303d74c64f66366f00cb9b2a94f3251bf5', username: 'heraldwriter', name: 'Herald Writer', url: 'https://medium.com/@heraldwriter', imageUrl: `${server.url}/avatar.png` };
  const publications: MediumFake['publications'] = [
    { id: 'b969ac62a46b', name: 'Herald Edits', description: 'Edited by us', url: 'https://medium.com/herald-edits', imageUrl: `${server.url}/p1.png`, role: 'editor' },
    { id: 'b45573563f5a', name: 'Guest Column', description: 'We write here', url: 'https://medium.com/guest-column', imageUrl: `${server.url}/p2.png`, role: 'writer' },
    { id: 'c0ffee000001', name: 'Followed Only', description: 'We read this', url: 'https://medium.com/followed', imageUrl: `${server.url}/p3.png` },
  ];
  const posts: MediumFakePost[] = [];
  const downloads: MediumFake['downloads'] = [];
  let next = 0xe6f36a;

  const authorized = (handler: (request: RecordedRequest) => FakeReply | Promise<FakeReply>) => (request: RecordedRequest) =>
    request.headers.authorization === `Bearer ${token}` ? handler(request) : failure(401, 'Token was invalid.', 6003);

  async function sideLoad(content: string) {
    for (const match of content.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const response = await fetch(match[1]).catch(() => undefined);
      downloads.push({ url: match[1], status: response?.status ?? 0, bytes: response ? Buffer.from(await response.arrayBuffer()) : Buffer.alloc(0) });
    }
  }

  async function create(request: RecordedRequest, publicationId?: string): Promise<FakeReply> {
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (typeof body.title !== 'string' || !body.title.trim()) return failure(400, 'A post title is required.', 6000);
    if (body.contentFormat !== 'html' && body.contentFormat !== 'markdown') return failure(400, 'contentFormat must be html or markdown.', 6000);
    if (typeof body.content !== 'string' || !body.content.trim()) return failure(400, 'Content is required.', 6000);
    if (body.publishStatus !== undefined && !['public', 'draft', 'unlisted'].includes(String(body.publishStatus))) return failure(400, 'Invalid publishStatus.', 6000);
    const tags = (body.tags ?? []) as unknown[];
    if (tags.length > 3 || tags.some((tag) => String(tag).length > 25)) return failure(400, 'At most 3 tags of at most 25 characters are used (fake: refused).', 6000);
    await sideLoad(body.content);
    const id = (next++).toString(16);
    const slug = body.title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const url = `https://medium.com/@${user.username}/${slug}-${id}`;
    posts.push({ id, publicationId, body, url });
    const status = String(body.publishStatus ?? 'public');
    return {
      status: 201,
      json: { data: { id, title: body.title, authorId: user.id, tags, url, publishStatus: status, ...(status === 'draft' ? {} : { publishedAt: Date.now() }), license: 'all-rights-reserved', ...(publicationId ? { publicationId } : {}) } },
    };
  }

  server.on('GET', '/v1/me', authorized(() => ({ json: { data: user } })));
  server.on('GET', '/v1/users/*/publications', authorized((request) =>
    request.path.split('/')[3] === user.id
      ? { json: { data: publications.map(({ role: _role, ...publication }) => publication) } }
      : failure(403, 'You may only list your own publications.', 6027),
  ));
  server.on('GET', '/v1/publications/*/contributors', authorized((request) => {
    const publication = publications.find((candidate) => candidate.id === request.path.split('/')[3]);
    if (!publication) return failure(404, 'Publication not found.', 6016);
    return { json: { data: [{ publicationId: publication.id, userId: 'someone-else', role: 'editor' }, ...(publication.role ? [{ publicationId: publication.id, userId: user.id, role: publication.role }] : [])] } };
  }));
  server.on('POST', '/v1/users/*/posts', authorized((request) =>
    request.path.split('/')[3] === user.id ? create(request) : failure(403, 'The authorId does not belong to the token user.', 6026),
  ));
  server.on('POST', '/v1/publications/*/posts', authorized((request) => {
    const publication = publications.find((candidate) => candidate.id === request.path.split('/')[3]);
    if (!publication?.role) return failure(403, "The publicationId doesn't point to a publication that the user can publish into.", 6030);
    if (publication.role === 'writer' && (request.json as { publishStatus?: string } | undefined)?.publishStatus !== 'draft') {
      return failure(403, 'Writers can only create drafts in this publication.', 6030);
    }
    return create(request, publication.id);
  }));

  return { server, url: server.url, token, user, publications, posts, downloads, close: () => server.close() };
}
