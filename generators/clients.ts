// The model clients, built once per configuration: `openai` (images, chat, text to speech) with OPENAI_BASE_URL, and
// `@fal-ai/client` (queue API) through FAL_PROXY_URL when set. A missing key means no client, never a fake one.
// Every model error is turned here into a refusal (the model's safety system said no) or a failure with what to try.
import { createRequire } from 'node:module';
import type OpenAI from 'openai';
import type { FalClient } from '@fal-ai/client';
import type { Config, GenerationSettings } from '../src/config.js';
import { ModelFailure, ModelRefusal } from './types.js';

export interface ModelClients {
  openai?: OpenAI;
  fal?: FalClient;
}

const built = new WeakMap<GenerationSettings, ModelClients>();

// The model SDKs are required on first use (their CommonJS builds): most processes never generate anything, and loading
// both cost every start a tenth of a second and some memory.
const requireModule = createRequire(import.meta.url);
const openAiSdk = () => requireModule('openai') as typeof import('openai');
const falSdk = () => requireModule('@fal-ai/client') as typeof import('@fal-ai/client');

/**
 * fal's client repeats a request after a transport error, the queue submit included: a submit that reached fal before the
 * connection broke would then be paid twice. A POST that fails in transport is reported as an abort, which the client never
 * repeats; reads (status, result) keep their retries.
 */
function falFetch(timeoutMs: number): typeof fetch {
  return async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    try {
      return await fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      if (method !== 'POST') throw error;
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${Math.round(timeoutMs / 1000)} s` : (error as Error).message;
      throw Object.assign(new Error(`fal could not be reached: ${reason}`), { name: 'AbortError', cause: error });
    }
  };
}

export function modelClients(config: Config): ModelClients {
  const settings = config.generation;
  const cached = built.get(settings);
  if (cached) return cached;
  const clients: ModelClients = {};
  if (settings.openai) {
    // No automatic retries: a timed-out image call may still be billed, and is never made a second time behind the user's back.
    clients.openai = new (openAiSdk().default)({ apiKey: settings.openai.apiKey, baseURL: settings.openai.baseUrl, timeout: settings.modelTimeoutMs, maxRetries: 0 });
  }
  if (settings.fal) {
    clients.fal = falSdk().createFalClient({
      credentials: settings.fal.apiKey,
      proxyUrl: settings.fal.proxyUrl ? { url: settings.fal.proxyUrl, when: 'always' } : undefined,
      fetch: falFetch(settings.modelTimeoutMs),
    });
  }
  built.set(settings, clients);
  return clients;
}

const seconds = (settings: GenerationSettings) => Math.round(settings.modelTimeoutMs / 1000);

/** An OpenAI SDK error as a refusal or a failure. `what` names the call ("the image", "the voice-over"). */
export function openAiError(error: unknown, what: string, settings: GenerationSettings): Error {
  if (error instanceof ModelRefusal || error instanceof ModelFailure) return error;
  const OpenAI = openAiSdk().default;
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelFailure(`OpenAI did not finish ${what} within ${seconds(settings)} s.`, 'Try again in a few minutes; if it keeps timing out, raise GENERATION_MODEL_TIMEOUT_SECONDS.');
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new ModelFailure(`OpenAI could not be reached for ${what}: ${error.message}`, 'Try again in a few minutes; check OPENAI_BASE_URL and the network if it persists.');
  }
  if (error instanceof OpenAI.APIError) {
    const code = String(error.code ?? '');
    const message = (error.error as { message?: string } | undefined)?.message ?? error.message;
    if (code === 'moderation_blocked' || code === 'content_policy_violation' || code === 'content_filter') return new ModelRefusal('OpenAI', message);
    if (error.status === 401 || error.status === 403) {
      return new ModelFailure(`OpenAI refused the API key for ${what}: ${message}`, 'Check OPENAI_API_KEY (and that the project may use this model).');
    }
    if (error.status === 429) return new ModelFailure(`OpenAI rate limit or quota reached for ${what}: ${message}`, 'Wait a minute and try again; check the OpenAI plan and billing if it persists.');
    if (error.status !== undefined && error.status >= 500) return new ModelFailure(`OpenAI failed on ${what} (${error.status}): ${message}`, 'Try again in a few minutes.');
    return new ModelFailure(`OpenAI refused the request for ${what} (${error.status ?? 'error'}): ${message}`, 'Check the OpenAI model settings (OPENAI_*_MODEL); simplify the prompt and try again.');
  }
  return new ModelFailure(`OpenAI call for ${what} failed: ${(error as Error).message}`, 'Try again in a few minutes.');
}

interface FalErrorDetail {
  msg?: string;
  type?: string;
}

/** A fal client error (model errors are `{detail: [{loc, msg, type}]}`, https://docs.fal.ai/errors) as a refusal or a failure. */
export function falError(error: unknown, what: string, settings: GenerationSettings): Error {
  if (error instanceof ModelRefusal || error instanceof ModelFailure) return error;
  if (error instanceof falSdk().ApiError) {
    const body = error.body as { detail?: unknown } | undefined;
    const details: FalErrorDetail[] = Array.isArray(body?.detail) ? (body.detail as FalErrorDetail[]) : typeof body?.detail === 'string' ? [{ msg: body.detail }] : [];
    const message = details.map((detail) => detail.msg).filter(Boolean).join('; ') || error.message;
    if (details.some((detail) => detail.type === 'content_policy_violation')) return new ModelRefusal('fal', message);
    if (error.status === 401 || error.status === 403) return new ModelFailure(`fal refused the key for ${what}: ${message}`, 'Check FAL_KEY and the fal account\'s balance.');
    if (error.status === 429) return new ModelFailure(`fal rate limit reached for ${what}: ${message}`, 'Wait a minute and try again.');
    if (error.status >= 500) return new ModelFailure(`fal failed on ${what} (${error.status}): ${message}`, 'Try again in a few minutes.');
    return new ModelFailure(`fal refused the request for ${what} (${error.status}): ${message}`, 'Check the prompt and images, and the fal model settings (FAL_*_MODEL).');
  }
  const message = (error as Error).message;
  if ((error as Error).name === 'TimeoutError' || /no answer within/.test(message)) {
    return new ModelFailure(`fal did not answer for ${what} within ${seconds(settings)} s.`, 'Try again in a few minutes; raise GENERATION_MODEL_TIMEOUT_SECONDS if it keeps timing out.');
  }
  return new ModelFailure(`fal call for ${what} failed: ${message}`, 'Try again in a few minutes; check FAL_PROXY_URL and the network if it persists.');
}
