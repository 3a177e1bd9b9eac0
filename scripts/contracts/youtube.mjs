// Refreshes the vendored YouTube contracts (test/contracts/youtube/) from Google's Discovery documents: the YouTube Data API v3
// (videos, channels, playlists, playlistItems, commentThreads, comments; videos.insert's `mediaUpload` describes the
// resumable upload) and the YouTube Analytics API v2 (reports.query), cut down to the methods Herald calls.
//
//   node scripts/contracts/youtube.mjs                                  # from Google's discovery service
//   node scripts/contracts/youtube.mjs youtube.v3=<path> youtubeAnalytics.v2=<path> --origin='<repo>@<commit> (<date>)'
//
// test/fakes/youtube.ts validates every request against the result; rerun this and look at the diff.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refreshAll } from './discovery.mjs';

const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/youtube');

/** The methods providers/youtube/*.ts call. */
export const APIS = [
  {
    file: 'youtube.v3',
    url: 'https://youtube.googleapis.com/$discovery/rest?version=v3',
    methods: [
      'youtube.channels.list',
      'youtube.playlists.list',
      'youtube.playlistItems.insert',
      'youtube.playlistItems.list',
      'youtube.videos.insert',
      'youtube.videos.list',
      'youtube.videos.update',
      'youtube.videos.delete',
      'youtube.commentThreads.insert',
      'youtube.commentThreads.list',
      'youtube.comments.list',
      'youtube.comments.insert',
      'youtube.comments.update',
      'youtube.comments.setModerationStatus',
      'youtube.comments.delete',
    ],
  },
  { file: 'youtubeAnalytics.v2', url: 'https://youtubeanalytics.googleapis.com/$discovery/rest?version=v2', methods: ['youtubeAnalytics.reports.query'] },
];

if (process.argv[1] === fileURLToPath(import.meta.url)) await refreshAll(APIS, OUTPUT, process.argv.slice(2));
