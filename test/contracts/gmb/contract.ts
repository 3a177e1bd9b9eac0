// Google Business Profile's own contract for the fake: the Discovery documents of the APIs Herald calls (./mybusiness.v4.json:
// local posts; ./mybusinessaccountmanagement.v1.json: accounts; ./mybusinessbusinessinformation.v1.json: locations;
// ./businessprofileperformance.v1.json: daily metrics; source, revision and date in their `x-herald-source`; refreshed with
// scripts/contracts/gmb.mjs), each checked by ../discovery.ts on its own host. A mismatch is a bug of Herald's request.
import fs from 'node:fs';
import type { RecordedRequest } from '../../helpers/fake-server.js';
import { discoveryContract, type DiscoveryContract } from '../discovery.js';

const read = (file: string) => JSON.parse(fs.readFileSync(new URL(`./${file}.json`, import.meta.url), 'utf8'));
export type GmbApi = 'mybusiness.v4' | 'mybusinessaccountmanagement.v1' | 'mybusinessbusinessinformation.v1' | 'businessprofileperformance.v1';
const checkers = new Map<GmbApi, DiscoveryContract>();
const checker = (api: GmbApi) => {
  let found = checkers.get(api);
  if (!found) {
    const document = read(api);
    found = discoveryContract([document], `${document.title} (revision ${document.revision})`);
    checkers.set(api, found);
  }
  return found;
};

/** What in a request to `api` the contract refuses, one sentence each; [] when it matches. `path` is the path on its host. */
export function contractProblems(api: GmbApi, request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'body' | 'headers'>, path: string): string[] {
  return checker(api).problems(request, path);
}
