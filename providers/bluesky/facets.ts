// Rich-text facets of a post as Bluesky's own app makes them: detected by the official `RichText` of @atproto/api (links,
// bare domains such as `bsky.app` or `example.org/page`, `@handle` mentions, #tags and $cashtags, with UTF-8 byte offsets),
// then each mention resolved to its DID through the channel's PDS (com.atproto.identity.resolveHandle).
// References: https://docs.bsky.app/docs/advanced-guides/post-richtext, lexicon app.bsky.richtext.facet,
// https://docs.bsky.app/docs/api/com-atproto-identity-resolve-handle.
// One departure from `RichText.detectFacets(agent)`: a handle that does not resolve stays plain text. The official method
// leaves such a mention with `did: ''`, which the lexicon refuses ("must be a valid did"), so the PDS would refuse the post.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { ProviderContext } from '../types.js';
import { serviceOf, xrpc } from './xrpc.js';

type Feature = { $type?: string; did?: string; [key: string]: unknown };
export type Facet = { $type?: string; index: { byteStart: number; byteEnd: number }; features: Feature[] };

const MENTION = 'app.bsky.richtext.facet#mention';

/** The DID of a handle, or undefined when the PDS says it does not resolve (400); other failures are thrown (retried later). */
async function resolveHandle(context: ProviderContext, handle: string): Promise<string | undefined> {
  try {
    // A public method: no token, so an expiring session never turns a mention into a refresh.
    return (await xrpc(context.fetch, serviceOf(context), 'com.atproto.identity.resolveHandle', z.object({ did: z.string() }), { query: { handle } })).did;
  } catch (error) {
    if (error instanceof PlatformHttpError && error.status === 400) return undefined;
    throw error;
  }
}

/** The facets of `text` (undefined when there are none), mentions carrying the DIDs the PDS resolved. */
export async function facetsOf(context: ProviderContext, text: string): Promise<Facet[] | undefined> {
  // Loaded when a post is made: the package carries every lexicon, which a process that never posts to Bluesky need not load.
  const { RichText } = await import('@atproto/api');
  const rich = new RichText({ text });
  rich.detectFacetsWithoutResolution();
  const detected = (rich.facets ?? []) as Facet[];
  const handles = [...new Set(detected.flatMap((facet) => facet.features.filter((feature) => feature.$type === MENTION).map((feature) => feature.did!)))];
  const dids = new Map(await Promise.all(handles.map(async (handle) => [handle, await resolveHandle(context, handle)] as const)));
  const facets = detected.flatMap((facet) => {
    const features = facet.features
      .map((feature) => (feature.$type === MENTION ? { ...feature, did: dids.get(feature.did!) } : feature))
      .filter((feature) => feature.$type !== MENTION || feature.did !== undefined);
    return features.length > 0 ? [{ ...facet, features }] : [];
  });
  return facets.length > 0 ? facets : undefined;
}
