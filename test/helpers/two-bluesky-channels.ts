// A Herald with two Bluesky channels (Alice's and Bob's, each on its own fake PDS) and an MCP client on its API key: what
// the tests of creates that compare channels (the duplicate guard, bulk import) start from.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './harness.js';
import { startBlueskyFake, type BlueskyFake } from '../fakes/bluesky.js';

export interface TwoChannels {
  herald: Herald;
  aliceChannel: string;
  bobChannel: string;
  client: Client;
  stop(): Promise<void>;
}

export async function startWithTwoBlueskyChannels(clientName: string): Promise<TwoChannels> {
  const herald = await startHerald();
  const alice = await startBlueskyFake();
  const bob = await startBlueskyFake({ handle: 'bob.bsky.social' });
  const connect = async (fake: BlueskyFake) => (await herald.rest('POST', '/integrations/bluesky/connect', { service: fake.url, identifier: fake.handle, appPassword: fake.password })).body.id as string;
  const aliceChannel = await connect(alice);
  const bobChannel = await connect(bob);
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } }));
  return {
    herald,
    aliceChannel,
    bobChannel,
    client,
    async stop() {
      await client.close().catch(() => undefined);
      await herald.stop();
      await alice.close();
      await bob.close();
    },
  };
}
