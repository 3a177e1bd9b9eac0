// VK's own method schema behind the fake (DESIGN.md §9): test/contracts/vk/methods.json is a dated cut of
// github.com/VKCOM/vk-api-schema, and the checker refuses what VK refuses: an unknown method, a call without the token or the
// version `v`, a parameter the method does not declare, a missing required one, a value of the wrong type; the fake answers
// such a call as VK does, HTTP 200 `{error: {error_code, error_msg}}`.
import { describe, expect, it } from 'vitest';
import { vkContractMethods, vkContractRefusal, vkContractSource } from '../contracts/vk/contract.js';
import { startVkFake } from '../fakes/vk.js';

const call = (params: Record<string, string>) => new URLSearchParams({ access_token: 'token', v: '5.199', ...params });

describe("VK's method schema", () => {
  it('is pinned to a dated revision of API 5.199 and holds every method the provider calls', () => {
    expect(vkContractSource).toMatchObject({ version: '5.199', revision: expect.stringMatching(/^0efe478/), retrieved: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(vkContractMethods).toEqual(expect.arrayContaining(['wall.post', 'wall.createComment', 'wall.get', 'wall.getComments', 'photos.saveWallPhoto', 'video.save']));
  });

  it('takes the calls Herald makes', () => {
    expect(vkContractRefusal('wall.post', call({ owner_id: '1234567', message: 'Hello', attachments: 'photo1234567_5,video1234567_6', guid: 'post-1' }))).toBeUndefined();
    expect(vkContractRefusal('wall.getComments', call({ owner_id: '1', post_id: '2', count: '100', offset: '0', sort: 'asc', extended: '1', fields: 'screen_name,photo_100', thread_items_count: '10', preview_length: '0' }))).toBeUndefined();
    expect(vkContractRefusal('wall.getById', call({ posts: '1234567_501' }))).toBeUndefined();
    expect(vkContractRefusal('wall.get', call({ count: '20', filter: 'owner' }))).toBeUndefined();
  });

  it('refuses what the schema does not hold, with the global error VK answers', () => {
    expect(vkContractRefusal('wall.remove', call({}))).toMatchObject({ code: 3 });
    expect(vkContractRefusal('wall.post', new URLSearchParams({ v: '5.199', message: 'x' }))).toMatchObject({ code: 5 });
    expect(vkContractRefusal('wall.post', new URLSearchParams({ access_token: 't', message: 'x' }))).toMatchObject({ code: 8 });
    expect(vkContractRefusal('wall.post', call({ v: '5.131', message: 'x' }))).toMatchObject({ code: 8 });
    // wall.get has had no owner_id since the schema of 2024-04-19: the wall is `domain`, or the token's user's.
    expect(vkContractRefusal('wall.get', call({ owner_id: '1234567', count: '20' }))).toMatchObject({ code: 100, problems: ['owner_id is not a parameter of wall.get'] });
    expect(vkContractRefusal('wall.getById', call({}))?.problems).toEqual(['posts is required']);
    expect(vkContractRefusal('wall.getById', call({ posts: '501' }))?.problems).toEqual(['posts item must be {owner_id}_{post_id}, got "501"']);
    expect(vkContractRefusal('wall.getComments', call({ post_id: 'abc', thread_items_count: '11', sort: 'newest', extended: 'true' }))?.problems).toEqual([
      'post_id must be integer, got "abc"',
      'thread_items_count must be <= 10',
      'sort must be one of asc, desc, smart, got "newest"',
      'extended must be boolean (0 or 1), got "true"',
    ]);
    expect(vkContractRefusal('wall.getComments', call({ fields: 'screen_name,avatar' }))?.problems).toEqual([expect.stringMatching(/^fields item must be one of .*got "avatar"$/)]);
  });

  it('makes the fake answer a call outside the schema with VK error 100 at HTTP 200, and records it', async () => {
    const fake = await startVkFake();
    try {
      // The schema is checked before the token is looked at: any token shows it.
      const response = await fetch(`${fake.url}/method/wall.get`, { method: 'POST', body: call({ owner_id: String(fake.userId) }) });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ error: { error_code: 100, error_msg: 'One of the parameters specified was missing or invalid: owner_id is not a parameter of wall.get', request_params: [] } });
      expect(fake.contractViolations).toEqual(['wall.get: owner_id is not a parameter of wall.get']);
    } finally {
      await fake.close();
    }
  });
});
