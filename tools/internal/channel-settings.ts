// What a person changes of a channel in the console (disabled, its customer), each change in the audit trail.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CustomerSchema, type Integration } from '../../src/db/entities.js';
import { notFound } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { recordChange } from './audit.js';
import { findIntegration } from './integrations.js';

export async function setChannelDisabled(em: EntityManager, organizationId: string, id: string, disabled: boolean): Promise<Integration> {
  const integration = await findIntegration(em, organizationId, id);
  const changed = integration.disabled !== disabled;
  integration.disabled = disabled;
  await em.flush();
  if (changed) {
    await recordChange(em, organizationId, {
      action: disabled ? 'channel.disabled' : 'channel.enabled',
      target: { kind: 'channel', id: integration.id },
      integrationId: integration.id,
      did: `${disabled ? 'disabled' : 'enabled'} the channel "${integration.name}"`,
      changes: { disabled },
    });
  }
  return integration;
}

/** Assigns the channel to a customer (the spec's group) by id, or to a new one by name; neither clears it. */
export async function setPreferredCustomer(
  em: EntityManager,
  organizationId: string,
  id: string,
  choice: { customerId?: string; newName?: string },
  now: Date,
): Promise<Integration> {
  const integration = await findIntegration(em, organizationId, id);
  const before = integration.customerId;
  let customerName: string | null = null;
  let created: { id: string; name: string } | undefined;
  if (choice.newName?.trim()) {
    const customer = em.create(CustomerSchema, { id: newId(), organizationId, name: choice.newName.trim().slice(0, 100), createdAt: now });
    integration.customerId = customer.id;
    customerName = customer.name;
    created = customer;
  } else if (choice.customerId) {
    const customer = await em.findOne(CustomerSchema, { id: choice.customerId, organizationId });
    if (!customer) throw notFound('That customer does not exist in this organization.');
    integration.customerId = customer.id;
    customerName = customer.name;
  } else {
    integration.customerId = null;
  }
  await em.flush();
  // Recorded once the customer exists (after the flush), like every other change.
  if (created) {
    await recordChange(em, organizationId, { action: 'customer.created', target: { kind: 'customer', id: created.id }, integrationId: integration.id, did: `created the customer "${created.name}"`, changes: { name: created.name } });
  }
  if (before !== integration.customerId) {
    await recordChange(em, organizationId, {
      action: 'channel.customer_changed',
      target: { kind: 'channel', id: integration.id },
      integrationId: integration.id,
      did: customerName ? `gave the channel "${integration.name}" to the customer "${customerName}"` : `took the channel "${integration.name}" from its customer`,
      changes: { customerId: { from: before, to: integration.customerId } },
    });
  }
  return integration;
}
