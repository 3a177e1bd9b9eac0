// A Herald whose AI generation calls the OpenAI fake, with its worker running: for tests of long generations over MCP
// (waits, cancels, tasks). Every model call answers after `delayMs`.
import { startHerald, type Herald } from './harness.js';
import { startOpenAiFake, type OpenAiFake } from '../fakes/openai.js';

export async function startGenerationHerald(delayMs: number): Promise<{ herald: Herald; openai: OpenAiFake }> {
  const openai = await startOpenAiFake();
  const herald = await startHerald(
    { OPENAI_API_KEY: openai.apiKey, OPENAI_BASE_URL: openai.baseUrl, GENERATION_TIMEOUT_SECONDS: '60', GENERATION_MODEL_TIMEOUT_SECONDS: '20', GENERATION_CHECK_SECONDS: '1' },
    { guard: { allowLoopback: true } },
  );
  await herald.startWorker();
  openai.delayMs = delayMs;
  return { herald, openai };
}
