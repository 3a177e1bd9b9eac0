// Workflow around the composer (issue 35): saved sets that start a post in one step, and signatures added to posts.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

const timestamp = () => p.datetime().columnType('timestamptz');

/** A saved set: channels, text, media and settings per platform, from which a new post starts (the console, or an agent's socialPost). */
export const PostSetSchema = defineEntity({
  name: 'PostSet',
  tableName: 'post_set',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    name: p.string(),
    channels: p.json<string[]>(),
    /** HTML, as a post's content. */
    content: p.text().default(''),
    media: p.json<{ id: string; path: string; alt?: string }[]>(),
    /** Platform identifier → its settings (without `__type`). */
    settings: p.json<Record<string, Record<string, unknown>>>(),
    createdAt: timestamp().onCreate(() => new Date()),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type PostSet = InferEntity<typeof PostSetSchema>;

export type SignaturePosition = 'end' | 'start';

/** A signature: `integrationId` '' is the organization's default; a channel's own overrides it. `text` is plain text. */
export const SignatureSchema = defineEntity({
  name: 'Signature',
  tableName: 'signature',
  properties: {
    organizationId: p.string().primary(),
    integrationId: p.string().primary(),
    text: p.text(),
    position: p.string().$type<SignaturePosition>(),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Signature = InferEntity<typeof SignatureSchema>;

export const workflowEntities = [PostSetSchema, SignatureSchema];
