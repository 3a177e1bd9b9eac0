// Meta's own Graph API specs behind the Facebook/Instagram fake (DESIGN.md §9): test/contracts/meta/graph.json is a dated cut
// of the node and edge specs in github.com/facebook/facebook-business-sdk-codegen (api_specs/specs), and the checker refuses
// what Graph refuses: an operation the node type does not have, a parameter the operation does not declare, a missing required
// one, a value of the wrong type or outside its enum, and a `fields` name the answered node type does not have. The fake
// answers such a request as Graph does, HTTP 400 {error: {message, type, code: 100, error_subcode?, fbtrace_id}}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metaContractCorrections, metaContractRefusal, metaContractSource, metaNodeTypes, type GraphRequestShape } from '../contracts/meta/contract.js';
import { startFacebookFake, type FacebookFake } from '../fakes/facebook.js';

const request = (node: string, method: string, edge: string | undefined, params: Record<string, unknown> = {}): GraphRequestShape => ({ node, method, edge, id: '1', params });

describe("Meta's Graph API specs", () => {
  it('are pinned to a dated revision of Graph API v25.0, holding every node type Herald reaches, with the corrections named', () => {
    expect(metaContractSource).toMatchObject({ version: 'v25.0', revision: expect.stringMatching(/^ad2b0b6/), date: '2026-04-15', retrieved: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(metaNodeTypes).toEqual(expect.arrayContaining(['User', 'Page', 'PagePost', 'AdVideo', 'Comment', 'IGUser', 'IGMedia', 'IGComment', 'ShadowIGMediaBuilder', 'IGUserForIGOnlyAPI', 'IGMediaForIGOnlyAPI']));
    expect(metaContractCorrections.map((entry) => entry.correction)).toEqual(expect.arrayContaining(['IGUserForIGOnlyAPI: POST mediapublish is POST media_publish']));
  });

  it('takes the requests Herald makes', () => {
    expect(metaContractRefusal(request('User', 'GET', 'accounts', { fields: 'id,name,username,access_token,picture,tasks,instagram_business_account{id,username,name,profile_picture_url}', limit: '100' }))).toBeUndefined();
    expect(metaContractRefusal(request('Page', 'POST', 'feed', { message: 'Hi', attached_media: [{ media_fbid: '1' }], published: true }))).toBeUndefined();
    expect(metaContractRefusal(request('PagePost', 'GET', 'comments', { filter: 'stream', order: 'reverse_chronological', fields: 'id,message,created_time,from{id,name},parent{id},is_hidden,permalink_url', limit: '100' }))).toBeUndefined();
    expect(metaContractRefusal(request('PagePost', 'GET', undefined, { fields: 'reactions.summary(true).limit(0),comments.summary(true).limit(0),shares' }))).toBeUndefined();
    expect(metaContractRefusal(request('IGUser', 'POST', 'media', { media_type: 'REELS', video_url: 'https://x/v.mp4', collaborators: ['a'], trial_params: { graduation_strategy: 'MANUAL' } }))).toBeUndefined();
    expect(metaContractRefusal(request('IGUser', 'GET', 'insights', { metric: 'views,profile_views', period: 'day', metric_type: 'total_value', since: '1700000000', until: '1700086400' }))).toBeUndefined();
    expect(metaContractRefusal(request('IGMedia', 'GET', 'comments', { fields: 'id,text,timestamp,username,from{id,username},hidden,replies{id,text,timestamp,from{id,username}}', limit: '50' }))).toBeUndefined();
    expect(metaContractRefusal(request('IGUserForIGOnlyAPI', 'POST', 'media_publish', { creation_id: '1001' }))).toBeUndefined();
  });

  it('refuses what the specs do not hold, naming what is wrong', () => {
    // An operation the node type does not have: GraphMethodException, subcode 33.
    expect(metaContractRefusal(request('IGMediaForIGOnlyAPI', 'DELETE', undefined))).toMatchObject({ type: 'GraphMethodException', subcode: 33 });
    expect(metaContractRefusal(request('IGUserForIGOnlyAPI', 'POST', 'mediapublish', { creation_id: '1' }))).toMatchObject({ type: 'GraphMethodException', subcode: 33 });
    expect(metaContractRefusal(request('IGComment', 'POST', undefined, {}))?.problems).toEqual(['(#100) The parameter hide is required']);
    expect(metaContractRefusal(request('Comment', 'POST', undefined, { is_hidden: 'yes', hidden: true }))?.problems).toEqual([
      '(#100) Param is_hidden must be a boolean, got "yes"',
      '(#100) hidden is not a parameter of POST on Comment',
    ]);
    expect(metaContractRefusal(request('PagePost', 'GET', 'comments', { order: 'newest' }))?.problems).toEqual(['(#100) Param order must be one of chronological, reverse_chronological, got "newest"']);
    expect(metaContractRefusal(request('IGMedia', 'GET', 'insights', { metric: 'impressions,plays,bogus' }))?.problems).toEqual([expect.stringMatching(/^\(#100\) Param metric\[2\] must be one of .*got "bogus"$/)]);
    expect(metaContractRefusal(request('IGUser', 'POST', 'media_publish', { creation_id: 'abc' }))?.problems).toEqual(['(#100) Param creation_id must be an integer, got "abc"']);
    // A video is not a post: it has no `reactions` edge and no `shares` field; `limit` pages a list, not a node.
    expect(metaContractRefusal(request('AdVideo', 'GET', undefined, { fields: 'reactions.summary(true),shares', limit: '1' }))?.problems).toEqual([
      '(#100) limit is not a parameter of GET on AdVideo',
      '(#100) Tried accessing nonexisting field (reactions) on node type (AdVideo)',
      '(#100) Tried accessing nonexisting field (shares) on node type (AdVideo)',
    ]);
    expect(metaContractRefusal(request('User', 'GET', 'accounts', { fields: 'id,instagram_business_account{id,biography,followers}' }))?.problems).toEqual(['(#100) Tried accessing nonexisting field (instagram_business_account.followers) on node type (IGUser)']);
    expect(metaContractRefusal(request('PagePost', 'GET', undefined, { fields: 'message.limit(1)' }))?.problems).toEqual([expect.stringMatching(/modifiers apply to edges/)]);
  });
});

describe('the fake refuses a request outside the specs as Graph does', () => {
  let fake: FacebookFake;
  beforeAll(async () => {
    fake = await startFacebookFake();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('answers 400 with Graph error body and records the violation', async () => {
    const response = await fetch(`${fake.url}/${fake.version}/101/published_posts?fields=id,headline&limit=5`, { headers: { authorization: `Bearer ${fake.pageToken('101')}` } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message: '(#100) Tried accessing nonexisting field (headline) on node type (PagePost)', type: 'OAuthException', code: 100, is_transient: false, fbtrace_id: expect.any(String) },
    });
    expect(fake.contractViolations.splice(0)).toEqual(['GET /v25.0/101/published_posts (Page): (#100) Tried accessing nonexisting field (headline) on node type (PagePost)']);
  });

  it('checks the Instagram Login token endpoints against their own specs', async () => {
    const response = await fetch(`${fake.url}/refresh_access_token?access_token=x`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('(#100) The parameter grant_type is required');
    expect(fake.contractViolations.splice(0)).toHaveLength(1);
  });
});
