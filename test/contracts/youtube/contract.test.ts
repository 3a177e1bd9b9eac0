// The Discovery checker (test/contracts/discovery.ts) on YouTube's vendored documents: the requests Herald sends fit, and what
// YouTube refuses (a method it does not have, an unknown field or parameter, a wrong enum or type, a missing required part, an
// upload of a type it does not accept) is named. The fake answers such a request 400/404 and records it.
import { describe, expect, it } from 'vitest';
import { contractProblems, youtubeContractSource } from './contract.js';
import { startYouTubeFake } from '../../fakes/youtube.js';

const request = (method: string, query: Record<string, string | string[]>, json?: unknown, headers: Record<string, string> = {}) => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) for (const item of [value].flat()) params.append(key, item);
  return { method, query: params, json, body: Buffer.from(json === undefined ? '' : JSON.stringify(json)), headers };
};

describe("YouTube's Discovery contract", () => {
  it('is the vendored revision, with its source', () => {
    expect(youtubeContractSource.data).toMatchObject({ revision: '20240529', url: expect.stringContaining('youtube.googleapis.com') });
    expect(youtubeContractSource.analytics).toMatchObject({ revision: '20230705' });
  });

  it('accepts the requests Herald sends', () => {
    const video = { snippet: { title: 'Launch', description: 'Hello', tags: ['a'] }, status: { privacyStatus: 'public', selfDeclaredMadeForKids: false } };
    expect(contractProblems(request('POST', { uploadType: 'resumable', part: 'snippet,status' }, video, { 'x-upload-content-type': 'video/mp4', 'x-upload-content-length': '1000' }), '/upload/youtube/v3/videos')).toEqual([]);
    expect(contractProblems(request('GET', { part: 'snippet', mine: 'true', maxResults: '50' }), '/youtube/v3/channels')).toEqual([]);
    expect(contractProblems(request('POST', { id: 'Ug1', moderationStatus: 'heldForReview' }), '/youtube/v3/comments/setModerationStatus')).toEqual([]);
    expect(contractProblems(request('GET', { part: 'snippet,replies', videoId: 'v1', order: 'time', maxResults: '100', textFormat: 'plainText' }), '/youtube/v3/commentThreads')).toEqual([]);
    expect(contractProblems(request('GET', { ids: 'channel==MINE', startDate: '2026-01-01', endDate: '2026-01-31', metrics: 'views', dimensions: 'day', sort: 'day' }), '/v2/reports')).toEqual([]);
  });

  it('names what YouTube would refuse', () => {
    expect(contractProblems(request('DELETE', { id: 'x' }), '/youtube/v3/commentThreads')).toEqual([expect.stringMatching(/DELETE \/youtube\/v3\/commentThreads is not a method .* takes POST, GET/)]);
    expect(contractProblems(request('GET', { part: 'snippet', mine: 'yes', maxResults: '51', mineOnly: 'true' }), '/youtube/v3/channels')).toEqual([
      expect.stringMatching(/maxResults must be at most 50, not 51/),
      expect.stringMatching(/mine must be true or false, not "yes"/),
      expect.stringMatching(/query parameter mineOnly is not in the contract/),
    ]);
    expect(contractProblems(request('GET', { videoId: 'v1' }), '/youtube/v3/commentThreads')).toEqual([expect.stringMatching(/query parameter part is required/)]);
    expect(contractProblems(request('POST', { id: 'Ug1', moderationStatus: 'hidden' }), '/youtube/v3/comments/setModerationStatus')).toEqual([expect.stringMatching(/moderationStatus must be one of published, heldForReview, likelySpam, rejected/)]);
    expect(contractProblems(request('POST', { part: 'snippet' }, { snippet: { videoId: 'v1', topLevelComment: { snippet: { textOriginal: 'hi', text: 'hi' } } } }), '/youtube/v3/commentThreads')).toEqual([
      expect.stringMatching(/body\/snippet\/topLevelComment\/snippet must NOT have additional properties \(text\)/),
    ]);
    // A playlist item needs its playlist and the resource it adds (annotations.required on youtube.playlistItems.insert).
    expect(contractProblems(request('POST', { part: 'snippet' }, { snippet: { resourceId: { kind: 'youtube#video', videoId: 'v1' } } }), '/youtube/v3/playlistItems')).toEqual([expect.stringMatching(/must have required property 'playlistId'/)]);
    expect(contractProblems(request('PUT', { part: 'snippet' }, { snippet: { title: 'x', categoryId: '22' } }), '/youtube/v3/videos')).toEqual([expect.stringMatching(/must have required property 'id'/)]);
    expect(contractProblems(request('POST', { uploadType: 'resumable', part: 'snippet' }, { snippet: { title: 'x' } }, { 'x-upload-content-type': 'image/png' }), '/upload/youtube/v3/videos')).toEqual([expect.stringMatching(/X-Upload-Content-Type "image\/png" is not one of video\/\*, application\/octet-stream/)]);
    expect(contractProblems(request('POST', { part: 'snippet' }, { snippet: { title: 'x' } }, { 'x-upload-content-type': 'video/mp4' }), '/upload/youtube/v3/videos')).toEqual([expect.stringMatching(/needs uploadType/)]);
  });

  it('the fake answers a request outside the contract 400 before its own checks, and records it', async () => {
    const fake = await startYouTubeFake();
    try {
      const wrong = await fetch(`${fake.url}/youtube/v3/channels?part=snippet&mine=true&maxResults=500`);
      expect(wrong.status).toBe(400);
      expect((await wrong.json()).error).toMatchObject({ code: 400, errors: [{ reason: 'badRequest', message: expect.stringContaining('maxResults must be at most 50') }] });
      const hidden = await fetch(`${fake.url}/youtube/v3/comments/setModerationStatus?id=x&moderationStatus=hidden`, { method: 'POST' });
      expect(hidden.status).toBe(400);
      expect(fake.contractViolations).toEqual([expect.stringContaining('maxResults must be at most 50'), expect.stringContaining('moderationStatus must be one of')]);
    } finally {
      await fake.close();
    }
  });
});
