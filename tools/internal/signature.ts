// Signatures (issue 35): plain text added at the end (or start) of a post when it is created, the channel's own or else the
// organization's default. Added once, by checkPlan (create-posts.ts) for every create and its preview, before the platform's
// length rules are applied: never on an edit (the stored text already holds it), never twice (a text that already ends, or
// starts, with it is left as it is: a duplicated post, a set saved from a signed post), never on each thread item (the last
// one, or the first for a signature at the start; a comment platform's post itself). `settings.signature: false` on one
// post (any input that takes settings: POST /posts, schedulePostTool, an import row, the composer) leaves it out.
import type { EntityManager } from '@mikro-orm/postgresql';
import { SignatureSchema, type Signature, type SignaturePosition } from '../../src/db/workflow-entities.js';
import { convertContent, plainTextContent } from '../../src/lib/content.js';
import { invalidInput } from '../../src/errors.js';
import type { Provider } from '../../providers/types.js';

export const SIGNATURE_MAX_LENGTH = 500;

export interface SignatureRule {
  text: string;
  position: SignaturePosition;
}

/** The organization's signatures: its default and each channel's own. */
export interface Signatures {
  organizationDefault?: SignatureRule;
  byChannel: Map<string, SignatureRule>;
}

export type SignatureRow = { integration_id: string; text: string; position: SignaturePosition };

export function signaturesOf(rows: (SignatureRow | Signature)[]): Signatures {
  const signatures: Signatures = { byChannel: new Map() };
  for (const row of rows) {
    const channel = 'integration_id' in row ? row.integration_id : row.integrationId;
    const rule = { text: row.text, position: row.position };
    if (channel === '') signatures.organizationDefault = rule;
    else signatures.byChannel.set(channel, rule);
  }
  return signatures;
}

/** The SQL of the create's read (create-statements.ts): the default and the signatures of the channels `$2`. */
export const SIGNATURES_SQL = `(select coalesce(json_agg(json_build_object('integration_id', s.integration_id, 'text', s.text, 'position', s.position)), '[]') from signature s
            where s.organization_id = $1 and (s.integration_id = '' or s.integration_id = any($2::text[]))) as signatures`;

export async function findSignatures(em: EntityManager, organizationId: string): Promise<Signatures> {
  return signaturesOf(await em.find(SignatureSchema, { organizationId }));
}

/** A channel's signature: its own, else the organization's default. */
export const signatureFor = (signatures: Signatures, integrationId: string): SignatureRule | undefined => signatures.byChannel.get(integrationId) ?? signatures.organizationDefault;

/** The signature as content: each line a paragraph, typed characters shown as typed (it is user text, escaped like any). */
export const signatureContent = (rule: SignatureRule) => plainTextContent(rule.text);

const plain = (html: string) => convertContent(html, 'plain').trim();

/** What withSignature added to an entry: the item that carries it and that item's text without it (the length check names it). */
export interface AppliedSignature {
  rule: SignatureRule;
  item: number;
  unsigned: string;
}

/**
 * The entry as it will be created: the signature added to one item (a new entry; the one given is left as it was, so the
 * duplicate guard compares the person's own text), `settings.signature` taken out of the settings.
 */
export function withSignature<Entry extends { settings: Record<string, unknown>; items: { content: string }[] }>(
  entry: Entry,
  provider: Pick<Provider, 'chain'>,
  rule: SignatureRule | undefined,
): { entry: Entry; signature?: AppliedSignature } {
  const { signature: optOut, ...settings } = entry.settings;
  const kept = optOut === undefined ? entry : { ...entry, settings };
  if (!rule || optOut === false || entry.items.length === 0) return { entry: kept };
  const item = rule.position === 'start' || provider.chain !== 'thread' ? 0 : entry.items.length - 1;
  const unsigned = entry.items[item].content;
  const added = signatureContent(rule);
  const text = plain(unsigned);
  const signatureText = plain(added);
  if (rule.position === 'end' ? text.endsWith(signatureText) : text.startsWith(signatureText)) return { entry: kept };
  // Plain text without tags is a post's text as it is: a paragraph of its own before (or after) the signature's.
  const body = /<[a-z]/i.test(unsigned) ? unsigned : unsigned.trim() ? `<p>${unsigned}</p>` : '';
  const items = entry.items.map((each, index) => (index === item ? { ...each, content: rule.position === 'end' ? `${body}${added}` : `${added}${body}` } : each));
  return { entry: { ...kept, items }, signature: { rule, item, unsigned } };
}

/**
 * The refusal of item `item` (`length` over `maxLength`) when it is the one that carries the signature and fits without it
 * (`lengthOf` measures a content as the platform counts it); undefined otherwise.
 */
export function signatureTooLong(applied: AppliedSignature | undefined, item: number, length: number, maxLength: number, lengthOf: (html: string) => number): string | undefined {
  if (!applied || applied.item !== item) return undefined;
  const unsignedLength = lengthOf(applied.unsigned);
  if (unsignedLength > maxLength) return undefined;
  const shown = applied.rule.text.length > 40 ? `${applied.rule.text.slice(0, 40)}…` : applied.rule.text;
  return `with the channel's signature "${shown}" (at the ${applied.rule.position}, ${length - unsignedLength} more) the text is ${length} of at most ${maxLength} (${unsignedLength} without it); shorten the text by ${length - maxLength}, shorten the signature, or send settings signature: false to post this one without it`;
}

/** A signature's text as typed, checked: plain text, at most SIGNATURE_MAX_LENGTH characters, not empty. */
export function checkedSignature(text: string, position: SignaturePosition = 'end'): SignatureRule {
  const trimmed = text.replace(/\r\n?/g, '\n').trim();
  if (!trimmed) throw invalidInput('text: the signature is empty.', { hint: 'Give the text to add to each post, or clear the signature instead.' });
  if (trimmed.length > SIGNATURE_MAX_LENGTH) throw invalidInput(`text: the signature has ${trimmed.length} characters; at most ${SIGNATURE_MAX_LENGTH}.`, { hint: 'Shorten it: it counts against every post\'s length.' });
  return { text: trimmed, position };
}

export async function setSignature(em: EntityManager, organizationId: string, integrationId: string, rule: SignatureRule): Promise<Signature> {
  const found = await em.findOne(SignatureSchema, { organizationId, integrationId });
  if (found) {
    found.text = rule.text;
    found.position = rule.position;
  } else em.persist(em.create(SignatureSchema, { organizationId, integrationId, ...rule, updatedAt: new Date() }));
  await em.flush();
  return (found ?? (await em.findOneOrFail(SignatureSchema, { organizationId, integrationId })));
}

/** Clears a signature; answers whether there was one. */
export async function clearSignature(em: EntityManager, organizationId: string, integrationId: string): Promise<boolean> {
  return (await em.nativeDelete(SignatureSchema, { organizationId, integrationId })) > 0;
}
