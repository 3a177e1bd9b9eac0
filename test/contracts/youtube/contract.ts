// YouTube's own contract for the fake: the Discovery documents of the YouTube Data API v3 and the YouTube Analytics API v2
// (./youtube.v3.json, ./youtubeAnalytics.v2.json; source, revision and date in their `x-herald-source`; refreshed with
// scripts/contracts/youtube.mjs), checked by ../discovery.ts. A mismatch is a bug of Herald's request: the fake refuses it.
import fs from 'node:fs';
import type { RecordedRequest } from '../../helpers/fake-server.js';
import { discoveryContract } from '../discovery.js';

const read = (file: string) => JSON.parse(fs.readFileSync(new URL(file, import.meta.url), 'utf8'));
const data = read('./youtube.v3.json');
const analytics = read('./youtubeAnalytics.v2.json');
export const youtubeContractSource = { data: data['x-herald-source'], analytics: analytics['x-herald-source'] };
const checker = discoveryContract([data, analytics], `YouTube Data API v3 (revision ${data.revision}) / YouTube Analytics API v2 (revision ${analytics.revision})`);

/** What in a request the contract refuses, one sentence each; [] when it matches. `path` is the path on the API host. */
export function contractProblems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'body' | 'headers'>, path: string): string[] {
  return checker.problems(request, path);
}
