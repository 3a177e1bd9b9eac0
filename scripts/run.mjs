// `npm start` and `npm run herald`: runs the compiled JavaScript in dist/ in this one node process, compiling first the
// sources that are newer than their output (a `git pull` without an install). When dist/ cannot be brought up to date
// (no TypeScript in a production install, a checkout this user may not write), the sources run through tsx instead, with a
// warning: slower to start, same behaviour.
//   node scripts/run.mjs main [--role web|worker|all]     the service
//   node scripts/run.mjs cli <command>                    the command line
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, distDir, plan, repositoryRoot } from './build.mjs';

const entries = { main: 'src/main', cli: 'src/cli' };
const entry = entries[process.argv[2]];
if (!entry) {
  console.error(`Usage: node scripts/run.mjs ${Object.keys(entries).join('|')} [arguments]`);
  process.exit(1);
}
// The entry sees its own arguments at process.argv[2...], as when run directly.
process.argv.splice(2, 1);

let compiled = true;
const planned = plan();
const { stale, orphans, manifestStale } = planned;
if (stale.length > 0 || orphans.length > 0 || manifestStale) {
  try {
    if (stale.length > 0) console.log(`Compiling ${stale.length} changed source file${stale.length === 1 ? '' : 's'} into dist/...`);
    await build(planned);
  } catch (error) {
    compiled = false;
    const why = error?.code === 'ERR_MODULE_NOT_FOUND' ? 'TypeScript is not installed' : `${error?.code ?? error?.message ?? error}`;
    console.warn(`Herald: dist/ is out of date and cannot be rebuilt (${why}); running the sources through tsx. Run npm install (or npm run build) as the checkout's owner to start faster.`);
  }
}

if (compiled) {
  await import(pathToFileURL(path.join(distDir, `${entry}.js`)).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(repositoryRoot, `${entry}.ts`)).href);
}
