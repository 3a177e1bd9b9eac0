// Lemmy's own client behind the fake (DESIGN.md §9): test/contracts/lemmy/v3.json and v4.json are the request types of
// lemmy-js-client at tags 0.19.9 (Lemmy 0.19, /api/v3) and 1.0.0-beta.1 (Lemmy 1.0, /api/v4) as JSON Schema, and the
// checker refuses a call the client does not make, a field its type lacks, a missing required one, a wrong type or enum; the
// fake answers such a request 400 `{error}` as Lemmy does.
import { describe, expect, it } from 'vitest';
import { lemmyContractProblems, lemmyContractSource, lemmyUpload } from '../contracts/lemmy/contract.js';
import { startLemmyFake } from '../fakes/lemmy.js';

const json = (method: string, body: unknown) => ({ method, query: new URLSearchParams(), json: body, body: Buffer.from(JSON.stringify(body)), headers: { 'content-type': 'application/json' } });
const get = (query: Record<string, string>) => ({ method: 'GET', query: new URLSearchParams(query), json: undefined, body: Buffer.alloc(0), headers: {} });

describe("lemmy-js-client's request types", () => {
  it('are pinned to the client tag of each API version, with its image upload', () => {
    expect(lemmyContractSource('v3')).toMatchObject({ version: 'v3', revision: expect.stringMatching(/^0\.19\.9, b9cd50f/), retrieved: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(lemmyContractSource('v4').revision).toMatch(/^1\.0\.0-beta\.1, c5846ba/);
    expect([lemmyUpload('v3'), lemmyUpload('v4')]).toEqual([{ path: '/pictrs/image', field: 'images[]' }, { path: '/image', field: 'images[]' }]);
  });

  it('take what the client sends and refuse what its types lack', () => {
    expect(lemmyContractProblems('v3', json('POST', { community_id: 11, name: 'Title', body: 'Text', nsfw: false }), '/post')).toEqual([]);
    expect(lemmyContractProblems('v3', get({ post_id: '5', sort: 'New', type_: 'All', limit: '50', page: '2' }), '/comment/list')).toEqual([]);
    expect(lemmyContractProblems('v3', json('POST', { username_or_email: 'a', password: 'b', stay_logged_in: true }), '/user/login')).toEqual(['body.stay_logged_in is not a field of the request']);
    expect(lemmyContractProblems('v4', json('POST', { username_or_email: 'a', password: 'b', stay_logged_in: true }), '/account/auth/login')).toEqual([]);
    expect(lemmyContractProblems('v3', json('POST', { community_id: '11' }), '/post')).toEqual(["body must have required property 'name'", 'body.community_id must be number']);
    expect(lemmyContractProblems('v3', get({ post_id: 'five', limit: '50' }), '/comment/list')).toEqual(['query.post_id must be number']);
    expect(lemmyContractProblems('v4', get({ post_id: '5', sort: 'New' }), '/comment/list')).toEqual(['query.sort must be one of hot, top, new, old, controversial']);
    expect(lemmyContractProblems('v4', get({ search_term: 'x', sort: 'Active' }), '/search')).toEqual(['query.sort is not a field of the request']);
    expect(lemmyContractProblems('v4', json('POST', { comment_id: 1, removed: false }), '/comment/remove')).toEqual(["body must have required property 'reason'"]);
    expect(lemmyContractProblems('v4', json('POST', { post_id: 1, deleted: true }), '/post/delete')).toEqual(['POST /api/v4/post/delete is not a call of lemmy-js-client 1.0.0-beta.1']);
    expect(lemmyContractProblems('v4', json('DELETE', { post_id: 1, deleted: true }), '/post')).toEqual([]);
    expect(lemmyContractProblems('v3', get({ id: '1' }), '/site')).toEqual(['query parameter id is not a field of the request']);
  });

  it("make the fake answer a request outside them 400 with Lemmy's {error} shape, and record it", async () => {
    const fake = await startLemmyFake();
    try {
      const response = await fetch(`${fake.url}/api/v3/user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username_or_email: 'herald', password: fake.password, remember: true }) });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'invalid_request', message: 'body.remember is not a field of the request' });
      expect(fake.contractViolations).toEqual(['POST /api/v3/user/login: body.remember is not a field of the request']);
    } finally {
      await fake.close();
    }
  });
});
