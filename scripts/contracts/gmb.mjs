// Refreshes the vendored Google Business Profile contracts (test/contracts/gmb/) from Google's Discovery documents, cut down to
// the methods Herald calls: local posts in the v4 `mybusiness` API (its discovery document is published as a sample file,
// not in the discovery directory: developers.google.com/my-business/samples), accounts in My Business Account Management v1,
// locations in My Business Business Information v1, daily metrics in Business Profile Performance v1.
//
//   node scripts/contracts/gmb.mjs                                      # from Google
//   node scripts/contracts/gmb.mjs mybusiness.v4=<path> ... --origin='<repo>@<commit> (<date>)'
//
// test/fakes/gmb.ts validates every request against the result; rerun this and look at the diff.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refreshAll } from './discovery.mjs';

const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/gmb');

/** The methods providers/gmb/*.ts call. */
export const APIS = [
  {
    file: 'mybusiness.v4',
    url: 'https://developers.google.com/my-business/samples/mybusiness_google_rest_v4p9.json',
    methods: [
      'mybusiness.accounts.locations.localPosts.create',
      'mybusiness.accounts.locations.localPosts.list',
      'mybusiness.accounts.locations.localPosts.patch',
      'mybusiness.accounts.locations.localPosts.delete',
    ],
  },
  { file: 'mybusinessaccountmanagement.v1', url: 'https://mybusinessaccountmanagement.googleapis.com/$discovery/rest?version=v1', methods: ['mybusinessaccountmanagement.accounts.list'] },
  { file: 'mybusinessbusinessinformation.v1', url: 'https://mybusinessbusinessinformation.googleapis.com/$discovery/rest?version=v1', methods: ['mybusinessbusinessinformation.accounts.locations.list'] },
  {
    file: 'businessprofileperformance.v1',
    url: 'https://businessprofileperformance.googleapis.com/$discovery/rest?version=v1',
    methods: ['businessprofileperformance.locations.fetchMultiDailyMetricsTimeSeries'],
  },
];

if (process.argv[1] === fileURLToPath(import.meta.url)) await refreshAll(APIS, OUTPUT, process.argv.slice(2));
