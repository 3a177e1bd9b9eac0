import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';

let herald: Herald;
beforeAll(async () => {
  herald = await startHerald();
});
afterAll(async () => herald.stop());

describe('smoke', () => {
  it('answers is-connected with a valid key', async () => {
    const response = await herald.rest('GET', '/is-connected');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ connected: true });
  });
});
