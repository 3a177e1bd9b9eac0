// Random identifiers, SHA-256 hashing of secrets, AES-256-GCM for platform tokens at rest.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Collision-resistant ids for rows: 20 letters and digits from a CSPRNG (119 bits). No `-` or `_`: an id that began with
 * `-` was read as an option by command-line clients (the postiz CLI's `posts:delete <id>`), one id in 32.
 */
export function newId(): string {
  let id = '';
  while (id.length < 20) {
    if (poolAt === idPool.length) {
      randomFillSync(idPool);
      poolAt = 0;
    }
    const value = idPool[poolAt++] & 63; // 62 and 63 are dropped, so each of the 62 characters is equally likely
    if (value < 62) id += ID_ALPHABET[value];
  }
  return id;
}

/** CSPRNG bytes drawn 4 KiB at a time, each used once (one system call per ~150 ids instead of one an id). */
const idPool = Buffer.alloc(4096);
let poolAt = idPool.length;

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class SecretBox {
  private readonly key: Buffer;
  constructor(hexKey: string) {
    this.key = Buffer.from(hexKey, 'hex');
    if (this.key.length !== 32) throw new Error('The encryption key must be 32 bytes (64 hex characters).');
  }
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const encrypted = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${encrypted.toString('base64url')}`;
  }
  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('Unreadable sealed value.');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
  /** HMAC-SHA256 under a key derived for `purpose`, so one secret serves several uses without crossing them. */
  mac(purpose: string, value: string): string {
    const key = createHmac('sha256', this.key).update(`herald:${purpose}`).digest();
    return createHmac('sha256', key).update(value).digest('base64url');
  }
  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }
  openJson<T>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }
}
