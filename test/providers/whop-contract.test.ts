// The Whop fake against Whop's own contract (test/contracts/whop/openapi.json: the operations Herald calls as the official
// @whop/sdk types them): a request the API v1 does not define (a body field or query parameter the SDK has not, a required one
// missing, a value of the wrong type) is answered 400 in Whop's error shape and recorded, so a wrong request from Herald fails
// its test (test/providers/whop.test.ts checks Herald's own requests after each test); Herald's own bodies fit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileBody, forumPostBody } from '../../providers/whop.js';
import { whopContractProblems, whopContractSource } from '../contracts/whop/contract.js';
import { startWhopFake, type WhopFake } from '../fakes/whop.js';

let fake: WhopFake;
beforeAll(async () => {
  fake = await startWhopFake();
});
afterAll(async () => {
  await fake.close();
});

const post = (body: unknown) => ({ method: 'POST', query: new URLSearchParams(), json: body, body: Buffer.from(JSON.stringify(body)) });
const get = (query: Record<string, string>) => ({ method: 'GET', query: new URLSearchParams(query), body: Buffer.alloc(0) });
const send = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${fake.url}${path}`, {
    method,
    headers: { authorization: 'Bearer not-checked-before-the-contract', 'content-type': 'application/json', 'Api-Version-Date': '2026-08-21-1' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as { error?: { type: string; message: string } } };
};

describe('the vendored Whop contract', () => {
  it('names the SDK, its release and the commit it was read at', () => {
    expect(whopContractSource.url).toBe('https://github.com/whopio/whopsdk-typescript');
    expect(whopContractSource.version).toMatch(/^@whop\/sdk \d+\.\d+\.\d+$/);
    expect(whopContractSource.revision).toMatch(/^[0-9a-f]{40}$/);
  });

  it("takes Herald's own bodies and queries: a post with title and attachments, a comment, a file, the lists", () => {
    expect(whopContractProblems(post(forumPostBody('exp_1', 'Hello **there**', { title: 'Hi' }, [{ id: 'file_1' }])), '/forum_posts')).toEqual([]);
    expect(whopContractProblems(post(forumPostBody('exp_1', 'A reply', { parent_id: 'post_1' }, [])), '/forum_posts')).toEqual([]);
    expect(whopContractProblems(post(fileBody('chart.png')), '/files')).toEqual([]);
    expect(whopContractProblems(get({ experience_id: 'exp_1', parent_id: 'post_1', first: '50', after: 'MjA=' }), '/forum_posts')).toEqual([]);
    expect(whopContractProblems(get({ company_id: 'biz_1', first: '50' }), '/forums')).toEqual([]);
    expect(whopContractProblems(get({}), '/forum_posts/post_1')).toEqual([]);
  });
});

describe('the fake refuses what the SDK does not define', () => {
  it('a body field Create Forum Post does not have, in Whop\'s error shape, recorded', async () => {
    const answer = await send('POST', '/api/v1/forum_posts', { experience_id: 'exp_announce', content: 'hi', attachment_ids: ['file_1'] });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(/^Invalid request: body must NOT have additional properties/);
    expect(fake.posts).toEqual([]);
    expect(fake.contractViolations).toHaveLength(1);
    fake.contractViolations.length = 0;
  });

  it('a missing required field, a value of the wrong type, an attachment without its id', () => {
    expect(whopContractProblems(post({ content: 'hi' }), '/forum_posts')).toEqual(["body must have required property 'experience_id'"]);
    expect(whopContractProblems(post({ experience_id: 'exp_1', title: 5 }), '/forum_posts')).toEqual(['body/title must be string', 'body/title must be null', 'body/title must match a schema in anyOf']);
    expect(whopContractProblems(post({ experience_id: 'exp_1', attachments: [{ file_id: 'file_1' }] }), '/forum_posts')).toContain("body/attachments/0 must have required property 'id'");
    expect(whopContractProblems(post({ name: 'chart.png' }), '/files')).toContain("body must have required property 'filename'");
  });

  it('a query parameter the list does not have, and a required one missing', async () => {
    expect(whopContractProblems(get({ experience_id: 'exp_1', limit: '50' }), '/forum_posts')).toEqual(['query parameter limit is not in the contract']);
    const answer = await send('GET', '/api/v1/forums?first=50');
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toBe('Invalid request: query parameter company_id is required');
    fake.contractViolations.length = 0;
  });

  it('an operation the API does not have', () => {
    expect(whopContractProblems({ method: 'DELETE', query: new URLSearchParams(), body: Buffer.alloc(0) }, '/forum_posts/post_1')).toEqual([
      expect.stringMatching(/^DELETE \/forum_posts\/post_1 is not an operation of Whop API v1/),
    ]);
  });
});
