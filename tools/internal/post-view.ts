// One post as the post resource (herald://posts/{id}) and the console's post page show it: the record every listing
// gives, and each item's preview: the text exactly as the platform receives it (the same conversion as publishing,
// `measure`), its length against the platform's limit, its media, and what went out.
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, type Integration, type Post } from '../../src/db/entities.js';
import { notFound } from '../../src/errors.js';
import { measure, mediaKind } from './create-posts.js';
import { providerOf } from './integrations.js';
import { chainOf, findPost, rootOf, toPostRecord, type PostRecord } from './posts.js';

export type ItemPreview = {
  position: number;
  /** The text the platform receives (plain text, Markdown or HTML, per platform). */
  text: string;
  /** Counted the platform's way (characters, X's weighted length, graphemes). */
  length: number;
  maxLength: number;
  overLimit: boolean;
  media: { id: string; path: string; kind: 'image' | 'video'; alt?: string }[];
  state: string;
  releaseURL: string | null;
  error: string | null;
  /** What the platform did other than asked (PublishedRef.warnings). */
  warnings: string[];
};

export type PostPreview = {
  platform: { identifier: string; name: string; editor: string; lengthMethod: string; chain: string };
  maxLength: number;
  items: ItemPreview[];
};

export interface PostView {
  record: PostRecord;
  preview: PostPreview;
  root: Post;
  chain: Post[];
  integration: Integration;
}

export function previewChain(integration: Integration, chain: Post[]): PostPreview {
  const provider = providerOf(integration);
  const settings = chain[0]?.settings ?? {};
  const maxLength = provider.maxLength({ isPremium: integration.additionalSettings.premium === true, settings, channel: integration.additionalSettings });
  return {
    platform: { identifier: provider.identifier, name: provider.name, editor: provider.editor, lengthMethod: provider.lengthMethod, chain: provider.chain },
    maxLength,
    items: chain.map((item) => {
      const { text, length } = measure(provider, item.content);
      return {
        position: item.position,
        text,
        length,
        maxLength,
        overLimit: length > maxLength,
        media: item.media.map((media) => ({ id: media.id, path: media.path, kind: mediaKind(media), ...(media.alt ? { alt: media.alt } : {}) })),
        state: item.state,
        releaseURL: item.releaseUrl ?? null,
        error: item.error ?? null,
        warnings: item.releaseWarnings ?? [],
      };
    }),
  };
}

/** The post (by the id of any item of its chain) with its chain, channel and preview. */
export async function postView(em: EntityManager, organizationId: string, id: string): Promise<PostView> {
  const root = await rootOf(em, await findPost(em, organizationId, id));
  const chain = await chainOf(em, root);
  const integration = await em.findOne(IntegrationSchema, { id: root.integrationId, organizationId });
  if (!integration) throw notFound(`The channel of post ${root.id} no longer exists.`);
  return { record: toPostRecord(root, chain, integration), preview: previewChain(integration, chain), root, chain, integration };
}
