// A fake Skool web API (api2.skool.com: unofficial, the calls the skool.com web app makes) and its presigned file storage,
// on one real HTTP server. The shapes follow what Postiz's Skool provider reads and sends (read 2026-11): Skool publishes
// neither documentation nor a contract, so nothing here is checked against one.
//
//   const fake = await startSkoolFake();
//   SOCIAL_ENDPOINTS={"skool": fake.endpoints}; connect fields { authToken: fake.authToken, clientId: fake.clientId }
//   fake.posts (posts and comments), fake.files; fake.endSession() (the cookies stop working)
//
// Refuses what the web app's API refuses: a request without both session cookies (401); a file record for another owner
// or without a length; a PUT whose Content-Type, x-amz-acl or length differ from the record (403 SignatureDoesNotMatch,
// as S3 does); a post in a group the user is not in, without a title, with a label the group does not have, or attaching a
// file whose bytes never arrived; posting in a group that requires a level (403 "must be admin or level"); a comment whose
// root is unknown or whose parent is not in that post.
import { randomBytes } from 'node:crypto';
import { startFakeServer, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

export interface FakeSkoolPost {
  id: string;
  name: string;
  postType: 'generic' | 'comment';
  groupId: string;
  rootId: string | null;
  parentId: string | null;
  title: string;
  content: string;
  labels: string | null;
  attachments: string[];
}

const jwt = (exp: number) => `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'u1', exp })).toString('base64url')}.signature`;

export async function startSkoolFake() {
  const server = await startFakeServer();
  const { url } = server;
  const sessionEnds = Math.floor(Date.now() / 1000) + 30 * 86_400;
  const authToken = jwt(sessionEnds);
  const clientId = 'client-abc123';
  const self = { id: 'user-1', name: 'ada-lovelace-1234', first_name: 'Ada', last_name: 'Lovelace', metadata: { picture_profile: `${url}/avatar.jpg` } };
  const groups = [
    { id: 'group-1', name: 'builders-club', metadata: { display_name: 'Builders Club', labels: 'label-1,label-2' } },
    { id: 'group-2', name: 'vip-lounge', metadata: { display_name: 'VIP Lounge', labels: '' }, level: 3 },
  ];
  const labels = [
    { id: 'label-1', metadata: { display_name: 'Announcements' } },
    { id: 'label-2', metadata: { display_name: 'Wins' } },
  ];
  const files: { id: string; key: string; contentType: string; length: number; acl: string; bytes?: Buffer }[] = [];
  const posts: FakeSkoolPost[] = [];
  let sessionOpen = true;

  const signedIn =
    (handler: FakeHandler): FakeHandler =>
    (request) => {
      const cookies = Object.fromEntries(String(request.headers.cookie ?? '').split(/;\s*/).map((pair) => pair.split('=') as [string, string]));
      if (!sessionOpen || cookies.auth_token !== authToken || cookies.client_id !== clientId) return { status: 401, json: { error: 'unauthorized', message: 'auth required' } };
      return handler(request);
    };
  const body = (request: RecordedRequest) => (request.json ?? {}) as Record<string, any>;
  const refuse = (status: number, message: string): FakeReply => ({ status, json: { error: message } });

  server.on('GET', '/self', signedIn(() => ({ json: self })));
  server.on('GET', '/users/*/groups', signedIn((request) => (request.path.split('/')[2] === self.id ? { json: { groups: groups.map(({ level: _level, ...group }) => group) } } : refuse(403, 'forbidden'))));
  server.on('GET', '/groups/*', signedIn((request) => {
    const group = groups.find((item) => item.id === request.path.split('/')[2]);
    if (!group) return refuse(404, 'group not found');
    const { level: _level, ...shown } = group;
    return { json: shown };
  }));
  server.on('GET', '/labels/*', signedIn((request) => {
    const label = labels.find((item) => item.id === request.path.split('/')[2]);
    return label ? { json: label } : refuse(404, 'label not found');
  }));

  server.on('POST', '/files', signedIn((request) => {
    const { file_name: name, content_type: contentType, content_length: length, owner_id: owner } = body(request);
    if (owner !== self.id) return refuse(403, 'owner_id must be the signed-in user');
    if (!name || !contentType || !(Number(length) > 0)) return refuse(400, 'file_name, content_type and content_length are required');
    const id = `file-${randomBytes(4).toString('hex')}`;
    const key = `${id}/${name}`;
    files.push({ id, key, contentType, length: Number(length), acl: 'public-read' });
    return { json: { write_url: `${url}/storage/${encodeURIComponent(key)}?X-Amz-Signature=${randomBytes(6).toString('hex')}`, acl: 'public-read', content_type: contentType, file: { id, file_name: name } } };
  }));

  server.on('PUT', '/storage/*', (request) => {
    const file = files.find((item) => item.key === decodeURIComponent(request.path.split('/')[2]));
    const mismatch = (what: string): FakeReply => ({ status: 403, headers: { 'content-type': 'application/xml' }, body: `<Error><Code>SignatureDoesNotMatch</Code><Message>${what} does not match the signature</Message></Error>` });
    if (!file || !request.query.get('X-Amz-Signature')) return mismatch('the URL');
    if (request.headers['content-type'] !== file.contentType) return mismatch('Content-Type');
    if (request.headers['x-amz-acl'] !== file.acl) return mismatch('x-amz-acl');
    if (request.body.length !== file.length) return mismatch('Content-Length');
    file.bytes = request.body;
    return { status: 200, headers: { etag: '"abc"' } };
  });

  server.on('POST', '/posts', signedIn((request) => {
    const { post_type: type, group_id: groupId, root_id: rootId, parent_id: parentId, metadata = {} } = body(request);
    const group = groups.find((item) => item.id === groupId);
    if (!group) return refuse(403, 'not a member of this group');
    if (group.level) return refuse(403, `must be admin or level ${group.level} to post`);
    const attachments = String(metadata.attachments ?? '').split(',').filter(Boolean);
    if (attachments.some((id) => !files.find((file) => file.id === id)?.bytes)) return refuse(400, 'attachment not uploaded');
    if (type === 'generic') {
      if (!String(metadata.title ?? '').trim()) return refuse(400, 'title is required');
      const groupLabels = group.metadata.labels.split(',').filter(Boolean);
      if (metadata.labels && !groupLabels.includes(metadata.labels)) return refuse(403, 'cannot post to this label');
    } else if (type === 'comment') {
      const root = posts.find((item) => item.id === rootId && item.postType === 'generic');
      if (!root) return refuse(404, 'post not found');
      if (parentId !== rootId && !posts.some((item) => item.id === parentId && item.rootId === rootId)) return refuse(404, 'parent not found');
    } else return refuse(400, `unknown post_type ${type}`);
    const id = randomBytes(8).toString('hex');
    const post: FakeSkoolPost = {
      id,
      name: type === 'generic' ? String(metadata.title).toLowerCase().replace(/\W+/g, '-') : `comment-${id}`,
      postType: type,
      groupId,
      rootId: rootId ?? null,
      parentId: parentId ?? null,
      title: String(metadata.title ?? ''),
      content: String(metadata.content ?? ''),
      labels: metadata.labels ?? null,
      attachments,
    };
    posts.push(post);
    return { json: { id, name: post.name, post_type: type, group_id: groupId, metadata: { ...metadata } } };
  }));

  return {
    server,
    url,
    authToken,
    clientId,
    sessionEnds,
    self,
    groups,
    posts,
    files,
    endpoints: { api: url, web: url },
    endSession() {
      sessionOpen = false;
    },
    close: () => server.close(),
  };
}

export type SkoolFake = Awaited<ReturnType<typeof startSkoolFake>>;
