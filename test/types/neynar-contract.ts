// Farcaster's contract, checked by the type check (npm test runs tsc first): what Herald sends to Neynar and what it reads
// of Neynar's answers, against the types of Neynar's official SDK, @neynar/nodejs-sdk 3.177.0 (npm, pinned in package.json;
// its models are generated from Neynar's OpenAPI, github.com/neynarxyz/OAS). A field Herald sends that Neynar does not take,
// a wrong type, or a field Herald requires that Neynar's answer does not promise fails `npm run typecheck`.
// Imported as types only: nothing of the SDK runs.
import type {
  Cast,
  Channel,
  Conversation,
  DeleteCastReqBody,
  ErrorRes,
  OperationResponse,
  PostCastReqBody,
  PostCastReqBodyEmbedsAnyOf2,
  PostCastResponse,
  Signer,
  User,
} from '@neynar/nodejs-sdk/build/api/models/index.js';
import type { CastBody, DeleteCastBody, NeynarReads } from '../../providers/warpcast.js';

type Assert<T extends true> = T;
/** A is accepted where B is expected (every value of A is a B). */
type Fits<A, B> = [A] extends [B] ? true : false;

// The generated `PostCastReqBodyEmbeds` merges the anyOf branches into one object with every branch's field required (a
// generator quirk); the branch for a link embed is PostCastReqBodyEmbedsAnyOf2 `{url}`, the one Herald sends.
type NeynarCastBody = Omit<PostCastReqBody, 'embeds'> & { embeds?: PostCastReqBodyEmbedsAnyOf2[] };

export type Contract = [
  Assert<Fits<CastBody, NeynarCastBody>>,
  // Every key Herald sends is one Neynar's body has (no stray field such Neynar would ignore or refuse).
  Assert<Fits<keyof CastBody, keyof PostCastReqBody>>,
  Assert<Fits<PostCastResponse, NeynarReads['posted']>>,
  Assert<Fits<Signer, NeynarReads['signer']>>,
  Assert<Fits<User, NeynarReads['user']>>,
  // Herald reads embeds loosely (any embed, its url when it has one): the index signature of that loose shape is left out.
  Assert<Fits<Cast, Omit<NeynarReads['cast'], 'embeds'> & { embeds: { url?: string }[] }>>,
  Assert<Fits<Channel, NeynarReads['channel']>>,
  Assert<Fits<ErrorRes, NeynarReads['error']>>,
  // Comments and deletion (lookup-cast-conversation, delete-cast).
  Assert<Fits<DeleteCastBody, DeleteCastReqBody>>,
  Assert<Fits<keyof DeleteCastBody, keyof DeleteCastReqBody>>,
  Assert<Fits<OperationResponse, NeynarReads['deleted']>>,
  // The nested replies (CastAndConversationsRef.direct_replies, typed `object` by the generator) are parsed level by level.
  Assert<Fits<Conversation, NeynarReads['conversation']>>,
];
