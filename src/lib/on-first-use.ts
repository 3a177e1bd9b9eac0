// Packages that only some requests need (HTML sanitizing, Markdown, XML feeds, MP4 probing, Nostr signing, X's text
// counting) are required on first use, through their CommonJS builds so that their callers stay synchronous: loading them
// all at start cost every start a few tenths of a second and the idle process their code. Each is resolved when its module
// is imported, at start, so a missing package still stops the start with its name rather than failing a request later.
import { createRequire } from 'node:module';

const requireModule = createRequire(import.meta.url);

/**
 * Resolves `specifier` now (throws at start when it is not installed) and answers a getter that loads it when first
 * called, and answers from then on what `build` made of it (the module itself without one: a parser, a configured instance).
 */
export function onFirstUse<M, T = M>(specifier: string, build: (loaded: M) => T = (loaded) => loaded as unknown as T): () => T {
  const resolved = requireModule.resolve(specifier);
  let value: { built: T } | undefined;
  return () => (value ??= { built: build(requireModule(resolved) as M) }).built;
}
