// Row ids go on command lines (the postiz CLI's `posts:delete <id>`, `analytics:post <id>`): one that began with `-` was
// read as an option and the command failed ("Not enough non-option arguments"), for one id in 32.
import { describe, expect, it } from 'vitest';
import { newId } from '../src/lib/crypto.js';

describe('row ids', () => {
  it('are 20 letters and digits, never a dash or an underscore, every character of the 62 used', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.join('')).size).toBe(62);
  });
});
