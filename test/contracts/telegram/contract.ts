// Telegram's own contract for the fake (DESIGN.md §9): every Bot API call the fake receives is checked against the methods and
// types of https://core.telegram.org/bots/api as vendored in ./bot-api.json (the page rendered to JSON by
// github.com/PaulSonOfLars/telegram-bot-api-spec at the revision and Bot API version named in its `x-herald-source`; refreshed
// with scripts/contracts/telegram.mjs). Checked: the method exists; every parameter is one the method has (a multipart file
// part only when a field names it with `attach://<name>`); the required ones are there; each value has one of the field's
// types: Integer, Float, String, Boolean, InputFile (an uploaded file), `Array of X` and the Bot API's object types (a
// JSON-serialized object, field by field, the same way down; an abstract type such as InputMedia by its `type`, which the
// reference words as "must be photo"). Telegram itself ignores parameters it does not know; the fake refuses them, because a
// misspelt parameter is a Herald bug that would otherwise pass unseen (a reply posted as a new message, say).
import fs from 'node:fs';

interface Field {
  name: string;
  types: string[];
  required: boolean;
  description: string;
}
interface Definition {
  name: string;
  fields?: Field[];
  subtypes?: string[];
}
interface BotApi {
  'x-herald-source': { url: string; revision: string; version: string; release_date: string; retrieved: string };
  methods: Record<string, { name: string; fields: Field[] }>;
  types: Record<string, Definition>;
}

const api = JSON.parse(fs.readFileSync(new URL('./bot-api.json', import.meta.url), 'utf8')) as BotApi;
export const telegramContractSource = api['x-herald-source'];

/** Whether `method` is a Bot API method of the vendored contract (Herald calls only these). */
export const isBotApiMethod = (method: string): boolean => Object.hasOwn(api.methods, method);

/** The one value a `type` field may take, as the reference words it ("Type of the media, must be photo"). */
const fixedType = (field: Field) => /must be ([a-z_]+)\s*$/i.exec(field.description)?.[1];

/**
 * Values as they arrive: `typed` for a JSON body (and anything inside a JSON-serialized parameter), where a number is a number;
 * not typed for the query string and form or multipart bodies, where every value is a string (or an uploaded file).
 */
function mismatch(value: unknown, types: string[], typed: boolean, where: string): string | undefined {
  // The page writes sendMediaGroup's media as "Array of InputMediaAudio, InputMediaDocument, InputMediaPhoto and InputMediaVideo"
  // (photos and videos mix in one album; documents and audio only with their own kind), which api.json splits into one
  // "Array of X" per kind: read as one array whose items are each one of the kinds. The kinds' mixing rule is the fake's.
  if (types.length > 1 && types.every((type) => type.startsWith('Array of '))) {
    return mismatchOne(value, `Array of ${types.map((type) => type.slice('Array of '.length)).join(' or ')}`, typed, where);
  }
  // Object alternatives told apart by their `type` ("must be photo"): only the one named is checked, for precise words.
  const given = (deserialized(value) as { type?: unknown } | null)?.type;
  const named = types.find((type) => api.types[type]?.fields?.some((field) => field.name === 'type' && fixedType(field) === given));
  if (named) return mismatchOne(value, named, typed, where);
  const problems = types.map((type) => mismatchOne(value, type, typed, where));
  if (problems.some((problem) => problem === undefined)) return undefined;
  // One alternative: its own words (they point inside the value); several: the list of what would have fitted.
  return types.length === 1 ? problems[0] : `${where} must be ${types.join(' or ')}`;
}

/** A JSON-serialized parameter: a string holding JSON is read as that JSON (Telegram's wording: "A JSON-serialized object"). */
function deserialized(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function mismatchOne(value: unknown, type: string, typed: boolean, where: string): string | undefined {
  const wrong = `${where} must be ${type}`;
  switch (type) {
    case 'Integer':
      return (typed ? Number.isInteger(value) : typeof value === 'string' && /^-?\d+$/.test(value)) ? undefined : wrong;
    case 'Float':
      return (typed ? typeof value === 'number' : typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) ? undefined : wrong;
    case 'String':
      return typeof value === 'string' ? undefined : wrong;
    case 'Boolean':
      return (typed ? typeof value === 'boolean' : value === 'true' || value === 'false') ? undefined : wrong;
    case 'InputFile':
      // An upload is a file part of a multipart body; a file_id or URL is the field's String alternative.
      return value instanceof Blob ? undefined : `${where} must be a file uploaded as multipart/form-data`;
  }
  const inner = deserialized(value);
  if (type.startsWith('Array of ')) {
    if (!Array.isArray(inner)) return `${where} must be a JSON-serialized ${type}`;
    const elements = type.slice('Array of '.length).split(' or ');
    for (const [index, entry] of inner.entries()) {
      const problem = mismatch(entry, elements, true, `${where}[${index}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  const definition = api.types[type];
  if (!definition) return `${where}: type ${type} is not in the vendored contract (rerun scripts/contracts/telegram.mjs)`;
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return `${where} must be a JSON-serialized ${type} object`;
  if (definition.subtypes) {
    const given = (inner as Record<string, unknown>).type;
    const subtype = definition.subtypes.find((name) => api.types[name]?.fields?.some((field) => field.name === 'type' && fixedType(field) === given));
    if (subtype) return mismatchOne(inner, subtype, true, where);
    // Unions told apart by their fields (e.g. ReplyMarkup's keyboards): the first that fits.
    const problems = definition.subtypes.map((name) => mismatchOne(inner, name, true, where));
    return problems.includes(undefined) ? undefined : problems[0];
  }
  return objectProblems(inner as Record<string, unknown>, definition.fields ?? [], where)[0];
}

/** Unknown, missing and mistyped fields of one object of a Bot API type (values typed: it came as JSON). */
function objectProblems(object: Record<string, unknown>, fields: Field[], where: string): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(object)) {
    if (!fields.some((field) => field.name === key)) problems.push(`${where} has no field "${key}"`);
  }
  for (const field of fields) {
    const value = object[field.name];
    if (value === undefined) {
      if (field.required) problems.push(`${where}.${field.name} is required`);
      continue;
    }
    const fixed = field.name === 'type' ? fixedType(field) : undefined;
    if (fixed !== undefined && value !== fixed) problems.push(`${where}.type must be "${fixed}"`);
    const problem = mismatch(value, field.types, true, `${where}.${field.name}`);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** `attach://<name>` references anywhere inside the parameters (JSON-serialized ones read as JSON). */
function attachments(params: Record<string, unknown>): Set<string> {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const match = /^attach:\/\/(.+)$/.exec(value);
      if (match) found.add(match[1]);
      else if (/^[[{]/.test(value.trim())) {
        const parsed = deserialized(value);
        if (typeof parsed === 'object') walk(parsed);
      }
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object' && !(value instanceof Blob)) Object.values(value).forEach(walk);
  };
  walk(params);
  return found;
}

/**
 * What the Bot API refuses in a call of `method`, one sentence each ([] when it fits). `typed` holds the parameters of a JSON
 * body, `strings` those of the query string and of form or multipart bodies (strings, and files for multipart parts).
 */
export function botApiProblems(method: string, typed: Record<string, unknown>, strings: Record<string, unknown>): string[] {
  const definition = api.methods[method];
  if (!definition) return [`method ${method} is not in the Bot API (${api['x-herald-source'].version})`];
  const problems: string[] = [];
  const all = { ...strings, ...typed };
  const attached = attachments(all);
  for (const [key, value] of Object.entries(all)) {
    const known = definition.fields.some((field) => field.name === key);
    if (!known && !(attached.has(key) && value instanceof Blob)) problems.push(`${method} has no parameter "${key}"`);
  }
  for (const field of definition.fields) {
    const isTyped = Object.hasOwn(typed, field.name);
    const value = isTyped ? typed[field.name] : strings[field.name];
    if (value === undefined) {
      if (field.required) problems.push(`parameter "${field.name}" is required`);
      continue;
    }
    const problem = mismatch(value, field.types, isTyped, `parameter "${field.name}"`);
    if (problem) problems.push(problem);
  }
  return problems;
}
