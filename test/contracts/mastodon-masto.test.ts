// Mastodon has no machine-readable API description; masto (pinned 7.7.1 in package.json, a maintained client whose types
// follow docs.joinmastodon.org) is the closest contract. masto speaks camelCase and converts to the API's snake_case on the
// wire, so Herald's snake_case shapes are converted key by key at the type level and must fit masto's types. The checks are
// compile-time: `npx tsc --noEmit` (and `npm test`) fails when a body Herald builds or a field it reads leaves the contract.
import type { mastodon } from 'masto';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { statusBody, type InstanceAnswer, type StatusBody } from '../../providers/mastodon.js';

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
/** A snake_case shape as masto types it: keys camelCased at every depth (index signatures of loose zod objects dropped). */
type AsMasto<T> = T extends (infer Item)[]
  ? AsMasto<Item>[]
  : T extends object
    ? { [K in keyof T as K extends string ? (string extends K ? never : Camel<K>) : never]: AsMasto<T[K]> }
    : T;
/** Distributes over a union, so each variant of a body is checked on its own. */
type EachAsMasto<T> = T extends unknown ? AsMasto<T> : never;

describe('Mastodon request and answer shapes against masto 7.7.1', () => {
  it('builds status bodies masto accepts as CreateStatusParams, with and without media', () => {
    expectTypeOf<EachAsMasto<StatusBody>>().toExtend<mastodon.rest.v1.CreateStatusParams>();
    // Assignability allows extra keys: every key Herald sends must also be one masto knows.
    type Known = keyof mastodon.rest.v1.CreateStatusParamsWithStatus | keyof mastodon.rest.v1.CreateStatusParamsWithMediaIds;
    expectTypeOf<Exclude<keyof EachAsMasto<StatusBody>, Known>>().toEqualTypeOf<never>();
    // What the provider really builds fits the declared body (and so masto's parameters).
    expect(statusBody('Hello', undefined, [])).toEqual({ status: 'Hello', visibility: 'public' });
    expect(statusBody('Hi', '1', ['7'])).toEqual({ status: 'Hi', visibility: 'public', in_reply_to_id: '1', media_ids: ['7'] });
  });

  it("reads only instance limits masto's v2 Instance has, with the same types", () => {
    type Configuration = NonNullable<AsMasto<InstanceAnswer>['configuration']>;
    expectTypeOf<Exclude<keyof Configuration, keyof mastodon.v2.Instance['configuration']>>().toEqualTypeOf<never>();
    expectTypeOf<Exclude<keyof NonNullable<Configuration['statuses']>, keyof mastodon.v2.Instance['configuration']['statuses']>>().toEqualTypeOf<never>();
    expectTypeOf<Required<NonNullable<Configuration['statuses']>>>().toExtend<Pick<mastodon.v2.Instance['configuration']['statuses'], 'maxCharacters' | 'maxMediaAttachments' | 'charactersReservedPerUrl'>>();
    expectTypeOf<Pick<Required<NonNullable<Configuration['mediaAttachments']>>, 'imageSizeLimit' | 'videoSizeLimit'>>().toExtend<
      Pick<mastodon.v2.Instance['configuration']['mediaAttachments'], 'imageSizeLimit' | 'videoSizeLimit'>
    >();
  });
});
