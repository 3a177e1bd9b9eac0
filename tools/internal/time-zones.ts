// The zones of an organization, its channels and its people (DESIGN §10): the organization's default, a channel's own (a
// client elsewhere; null follows the organization), a person's own (null: the browser's). IANA names only.
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, OrganizationSchema, type Integration } from '../../src/db/entities.js';
import { UserSchema } from '../../src/db/account-entities.js';
import { invalidInput } from '../../src/errors.js';
import { canonicalZone } from '../../src/lib/time-zone.js';
import { findIntegration } from './integrations.js';
import { recordChange } from './audit.js';

/** A zone a client sent, as its canonical IANA name; a clear 400 when it is not one. */
export function zoneInput(value: string, field = 'timeZone'): string {
  const zone = canonicalZone(value);
  if (!zone) {
    throw invalidInput(`${field}: "${value.slice(0, 80)}" is not an IANA time zone.`, {
      hint: 'Use a zone name such as "Europe/Paris", "America/New_York" or "UTC" (not an offset such as "+02:00": offsets do not follow daylight-saving time).',
    });
  }
  return zone;
}

export async function organizationZone(em: EntityManager, organizationId: string): Promise<string> {
  const rows = await em.getConnection().execute<{ time_zone: string }[]>('select time_zone from organization where id = ?', [organizationId]);
  return rows[0]?.time_zone ?? 'UTC';
}

/** The zone a channel's people think in: its own, else the organization's. */
export const channelZone = (integration: Pick<Integration, 'timeZone'>, organizationDefault: string) => integration.timeZone ?? organizationDefault;

export async function setOrganizationZone(em: EntityManager, organizationId: string, value: string): Promise<string> {
  const zone = zoneInput(value);
  const before = await organizationZone(em, organizationId);
  await em.nativeUpdate(OrganizationSchema, { id: organizationId }, { timeZone: zone });
  // Posting times in the organization's zone of channels that follow it keep following it (09:00 stays 09:00 local).
  await em.nativeUpdate(IntegrationSchema, { organizationId, timeZone: null, postingTimesZone: before }, { postingTimesZone: zone });
  if (before !== zone) {
    await recordChange(em, organizationId, { action: 'organization.time_zone_changed', target: { kind: 'organization', id: organizationId }, did: `changed the organization's time zone to ${zone}`, changes: { timeZone: { from: before, to: zone } } });
  }
  return zone;
}

/** A person's zone; an empty value goes back to the browser's. */
export async function setUserZone(em: EntityManager, userId: string, value: string): Promise<string | null> {
  const zone = value.trim() ? zoneInput(value) : null;
  await em.nativeUpdate(UserSchema, { id: userId }, { timeZone: zone });
  return zone;
}

/** A channel's zone; an empty value follows the organization's again. */
export async function setChannelZone(em: EntityManager, organizationId: string, id: string, value: string): Promise<Integration> {
  const integration = await findIntegration(em, organizationId, id);
  const before = integration.timeZone ?? null;
  integration.timeZone = value.trim() ? zoneInput(value) : null;
  // Posting times in the channel's zone keep being in it (a client's 09:00 is 09:00 where the client is).
  const organizationDefault = await organizationZone(em, organizationId);
  if (integration.postingTimesZone === (before ?? organizationDefault)) integration.postingTimesZone = channelZone(integration, organizationDefault);
  await em.flush();
  if (before !== integration.timeZone) {
    await recordChange(em, organizationId, {
      action: 'channel.time_zone_changed',
      target: { kind: 'channel', id: integration.id },
      integrationId: integration.id,
      did: `changed the time zone of the channel "${integration.name}" to ${integration.timeZone ?? "the organization's"}`,
      changes: { timeZone: { from: before, to: integration.timeZone } },
    });
  }
  return integration;
}
