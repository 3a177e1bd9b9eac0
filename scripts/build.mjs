// Compiles Herald's TypeScript (src/, tools/, providers/, generators/) to dist/ with the TypeScript compiler, one file at a
// time and only the files whose source is newer than their output, so `npm start` runs plain JavaScript in one node process
// with no transpiler loaded. Run by `npm install` (prepare), by `npm run build`, and by scripts/run.mjs when a source is newer
// than its output (a `git pull` without an install). Type checking stays `npm run typecheck`'s job (the project compiles
// with isolatedModules, so each file compiles alone exactly as tsc would emit it).
//
// Safe when several processes build at once (the tests start several Heralds): every output is written to a temporary file
// and renamed into place, so a reader sees the old file or the new one, never half of one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const distDir = path.join(repositoryRoot, 'dist');
const SOURCE_ROOTS = ['src', 'tools', 'providers', 'generators'];

function* sources(directory) {
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) yield* sources(full);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield full;
  }
}

function* outputs(directory) {
  if (!fs.existsSync(directory)) return;
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) yield* outputs(full);
    else if (entry.name.endsWith('.js')) yield full;
  }
}

const outputOf = (source) => path.join(distDir, path.relative(repositoryRoot, source)).replace(/\.ts$/, '.js');
const mtime = (file) => {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

/** What a build would do: sources without an up-to-date output, and outputs whose source is gone. Costs a few stat calls. */
export function plan() {
  const stale = [];
  const expected = new Set();
  for (const root of SOURCE_ROOTS) {
    for (const source of sources(path.join(repositoryRoot, root))) {
      const output = outputOf(source);
      expected.add(output);
      if (mtime(output) < mtime(source)) stale.push(source);
    }
  }
  const orphans = [];
  for (const root of SOURCE_ROOTS) for (const output of outputs(path.join(distDir, root))) if (!expected.has(output)) orphans.push(output);
  const manifest = path.join(distDir, 'package.json');
  return { stale, orphans, manifestStale: mtime(manifest) < mtime(path.join(repositoryRoot, 'package.json')) };
}

function writeAtomically(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

/** Brings dist/ up to date (as `planned`, a plan() the caller already made, says); answers how many files were compiled and removed. Throws when TypeScript is missing or dist/ is not writable. */
export async function build(planned = plan()) {
  const { stale, orphans, manifestStale } = planned;
  if (stale.length > 0) {
    const { default: ts } = await import('typescript');
    const compilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ES2022,
      esModuleInterop: true,
      verbatimModuleSyntax: false,
      isolatedModules: true,
      sourceMap: false,
    };
    for (const source of stale) {
      const { outputText } = ts.transpileModule(fs.readFileSync(source, 'utf8'), { compilerOptions, fileName: source, reportDiagnostics: false });
      writeAtomically(outputOf(source), outputText);
    }
  }
  for (const orphan of orphans) fs.rmSync(orphan, { force: true });
  if (manifestStale || stale.length > 0) {
    // dist/ code that reads ../../package.json (a user agent's version) finds this one.
    const { name, version, private: isPrivate } = JSON.parse(fs.readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8'));
    writeAtomically(path.join(distDir, 'package.json'), `${JSON.stringify({ name: `${name}-dist`, version, private: isPrivate, type: 'module' }, null, 2)}\n`);
  }
  return { compiled: stale.length, removed: orphans.length };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  try {
    const { compiled, removed } = await build();
    console.log(`Herald build: ${compiled} file${compiled === 1 ? '' : 's'} compiled${removed ? `, ${removed} removed` : ''} into dist/ in ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    // An install without devDependencies has no TypeScript: `npm start` then runs the sources through tsx (slower, warned).
    if (error?.code === 'ERR_MODULE_NOT_FOUND') console.warn('Herald build skipped: TypeScript is not installed (npm install without --omit=dev builds dist/).');
    else throw error;
  }
}
