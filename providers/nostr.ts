// Nostr: kind-1 notes signed with the user's key and sent to relays; media are public links in the text.
import type { Provider } from './types.js';

const nostr: Provider = {
  identifier: 'nostr',
  name: 'Nostr',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'privateKey', label: 'Private key', type: 'password', required: true, description: 'Hex private key (or nsec) of the account' }],
  },
  // Comma-separated relay list; one override replaces the whole list.
  endpoints: { relays: 'wss://nos.lol,wss://relay.damus.io,wss://relay.snort.social,wss://temp.iris.to,wss://vault.iris.to' },
  maxLength: () => 100000,
  rules:
    'A note of text; pictures and videos are added as public links in the text. Later items are replies to the previous note. ' +
    'Relays may refuse notes over about 64 KB.',
  settings: null,
  chain: 'thread',
  tools: [],
};

export default nostr;
