// The operator's setup link of a test's Herald (what the first-start banner and `npm run herald -- setup-link` print): how a
// test's person becomes the owner of its organization, since being the first to sign up no longer makes anyone an owner.
import { createSetupLink } from '../../tools/internal/accounts.js';
import type { Herald } from './harness.js';

/** A fresh setup link's token for the organization (the harness's own by default); earlier unused ones stop working. */
export async function setupToken(herald: Herald, organizationId = herald.organizationId): Promise<string> {
  const link = await createSetupLink(herald.services.orm.em.fork(), organizationId, { publicUrl: herald.url, now: herald.services.now() });
  return link.slice(link.lastIndexOf('/') + 1);
}
