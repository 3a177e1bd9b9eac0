// Packages needed only by some requests are loaded on first use (src/lib/on-first-use.ts), yet a missing one still fails
// the start; and the start itself does not load them.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { onFirstUse } from '../src/lib/on-first-use.js';
import { repositoryRoot } from './helpers/herald-process.js';

const evaluations = () => (globalThis as { firstUseEvaluations?: number }).firstUseEvaluations ?? 0;

describe('onFirstUse', () => {
  it('loads the package at the first call only, once, and builds from it once', () => {
    const before = evaluations();
    let builds = 0;
    const counter = onFirstUse('../../test/fixtures/first-use-counter.cjs', (loaded: { answer: number }) => ({ doubled: loaded.answer * 2, build: ++builds }));
    expect(evaluations()).toBe(before);
    expect(counter()).toEqual({ doubled: 84, build: 1 });
    expect(counter()).toBe(counter());
    expect(builds).toBe(1);
    expect(evaluations()).toBe(before + 1);
  });

  it('a package that is not installed fails when its module is imported (at start), naming it', () => {
    expect(() => onFirstUse('herald-no-such-package')).toThrow(/herald-no-such-package/);
  });
});

describe('the start', () => {
  it('does not load the packages only some requests need', () => {
    // The modules src/main.ts loads to start, in a fresh process that lists every package file it loaded.
    const script = `
      import { register } from 'node:module';
      const loaded = new Set();
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (url) => loaded.add(url));
      register('data:text/javascript,' + encodeURIComponent('let port; export function initialize(d) { port = d.port } export async function load(url, context, next) { port.postMessage(url); return next(url, context); }'), { data: { port: port2 }, transferList: [port2] });
      const Module = (await import('node:module')).default;
      for (const entry of ['src/bootstrap.js', 'src/jobs/index.js', 'src/http/app.js', 'src/mcp/sessions.js']) await import(${JSON.stringify(path.join(repositoryRoot, 'dist') + '/')} + entry);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const files = [...loaded, ...Object.keys(Module._cache)];
      const packages = new Set(files.map((file) => file.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)/)?.[1]).filter(Boolean));
      console.log(JSON.stringify([...packages]));
      process.exit(0);
    `;
    const packages = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repositoryRoot, encoding: 'utf8' }).trim().split('\n').pop()!) as string[];
    expect(packages).toContain('@mikro-orm/core'); // the listing works
    for (const later of ['sanitize-html', 'markdown-it', 'fast-xml-parser', 'mp4box', 'nostr-tools', 'ws', 'twitter-text']) expect(packages, later).not.toContain(later);
  });
});
