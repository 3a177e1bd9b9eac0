// A channel's platform settings as form fields, from the provider's settings schema (the JSON Schema integrationSchema
// answers): a choice for enumerations and yes/no, a text or number field, and JSON for lists and objects. The values go
// back to the tools as the API sends them, so the rules checked are the API's own (validatePost / createPost).
import type { Provider } from '../../../providers/types.js';
import { settingsJsonSchema } from '../../../tools/internal/settings-record.js';
import { DomainError } from '../../errors.js';
import { html, type Markup } from './html.js';

interface Property {
  type?: string;
  enum?: unknown[];
  description?: string;
  default?: unknown;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

export interface SettingField {
  key: string;
  kind: 'choice' | 'yes-no' | 'text' | 'number' | 'json';
  required: boolean;
  property: Property;
}

/** The fields of a provider's settings, in the schema's order. */
export function settingFields(provider: Provider): SettingField[] {
  const schema = settingsJsonSchema(provider);
  if (typeof schema === 'string') return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, Property>)
    .filter(([key]) => key !== '__type')
    .map(([key, property]) => {
      const kind: SettingField['kind'] = property.enum
        ? 'choice'
        : property.type === 'boolean'
          ? 'yes-no'
          : property.type === 'string'
            ? 'text'
            : property.type === 'number' || property.type === 'integer'
              ? 'number'
              : 'json';
      return { key, kind, required: required.has(key), property };
    });
}

const humanize = (key: string) => key.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (first) => first.toUpperCase());

/** The form fields of one channel's settings; `values` are what the person typed (field name → text). */
export function settingsMarkup(provider: Provider, channelId: string, values: Record<string, string>): Markup {
  const fields = settingFields(provider);
  if (fields.length === 0) return html`<p class="hint">${provider.name} needs no settings.</p>`;
  return html`${fields.map((field) => {
    const id = `setting-${channelId}-${field.key}`;
    const name = `setting:${channelId}:${field.key}`;
    const value = values[field.key] ?? '';
    const description = [field.property.description, field.required ? 'Required.' : '', field.property.default !== undefined ? `Default: ${JSON.stringify(field.property.default)}.` : '']
      .filter(Boolean)
      .join(' ');
    const described = description ? html` aria-describedby="${id}-hint"` : '';
    const label = html`<label for="${id}">${humanize(field.key)}${field.required ? ' (required)' : ''}</label>`;
    const hint = description ? html`<p class="hint" id="${id}-hint">${description}</p>` : '';
    switch (field.kind) {
      case 'choice':
        return html`${label}<select id="${id}" name="${name}"${described}><option value="">${field.required ? 'Choose…' : '(platform default)'}</option>${(field.property.enum ?? []).map(
          (choice) => html`<option value="${String(choice)}"${String(choice) === value ? html` selected` : ''}>${String(choice)}</option>`,
        )}</select>${hint}`;
      case 'yes-no':
        return html`${label}<select id="${id}" name="${name}"${described}><option value="">(platform default)</option><option value="true"${value === 'true' ? html` selected` : ''}>Yes</option><option value="false"${value === 'false' ? html` selected` : ''}>No</option></select>${hint}`;
      case 'number':
        return html`${label}<input id="${id}" name="${name}" type="number" value="${value}"${field.property.minimum !== undefined ? html` min="${field.property.minimum}"` : ''}${field.property.maximum !== undefined ? html` max="${field.property.maximum}"` : ''}${described}>${hint}`;
      case 'text':
        return html`${label}<input id="${id}" name="${name}" type="text" value="${value}"${field.property.maxLength ? html` maxlength="${field.property.maxLength}"` : ''}${described}>${hint}`;
      default:
        return html`${label}<textarea id="${id}" name="${name}" rows="2" class="code"${described}>${value}</textarea>${hint ? html`<p class="hint" id="${id}-hint">${description} Write JSON.</p>` : html`<p class="hint">Write JSON.</p>`}`;
    }
  })}`;
}

/** The settings object of one channel from what was typed: empty fields are left out (the platform's default applies). */
export function settingsValues(provider: Provider, channelName: string, values: Record<string, string>): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const field of settingFields(provider)) {
    const raw = (values[field.key] ?? '').trim();
    if (!raw) continue;
    if (field.kind === 'yes-no') settings[field.key] = raw === 'true';
    else if (field.kind === 'number') {
      const number = Number(raw);
      if (!Number.isFinite(number)) throw new DomainError('invalid_input', `${channelName}: ${humanize(field.key)} must be a number.`);
      settings[field.key] = number;
    } else if (field.kind === 'json') {
      try {
        settings[field.key] = JSON.parse(raw);
      } catch (error) {
        throw new DomainError('invalid_input', `${channelName}: ${humanize(field.key)} is not valid JSON (${(error as Error).message}).`, {
          hint: 'Write a JSON value such as ["one", "two"] or {"name": "value"}, or leave the field empty.',
        });
      }
    } else settings[field.key] = raw;
  }
  return settings;
}

/** A stored settings object as the form's fields (what settingsValues reads back). */
export function settingsTyped(provider: Provider, settings: Record<string, unknown>): Record<string, string> {
  const typed: Record<string, string> = {};
  for (const field of settingFields(provider)) {
    const value = settings[field.key];
    if (value === undefined || value === null) continue;
    typed[field.key] = field.kind === 'json' ? JSON.stringify(value) : String(value);
  }
  return typed;
}
