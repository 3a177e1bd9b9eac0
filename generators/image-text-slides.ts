// image-text-slides: a narrated slideshow. A chat model (structured output) splits the prompt into 3–5 slides
// {imagePrompt, voiceText}; each slide gets a picture (generators/image.ts) and an OpenAI voice-over; Herald composes the MP4
// itself with ffmpeg (generators/slide-video.ts).
// Chat: https://platform.openai.com/docs/api-reference/chat/create with response_format {type: "json_schema",
// json_schema: {name, strict: true, schema}}; the answer is JSON in choices[0].message.content, or message.refusal.
// Speech: https://platform.openai.com/docs/api-reference/audio/createSpeech {model, voice, input (≤ 4096 characters),
// response_format: "mp3"} answers the audio bytes.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { openAiError } from './clients.js';
import { drawImage, imageModel, missingImageSettings } from './image.js';
import { audioDuration, composeSlides, type Slide } from './slide-video.js';
import { ModelFailure, ModelRefusal, runLimited, settleAll, type GenerationContext, type Generator } from './types.js';

/** OpenAI's built-in text-to-speech voices (gpt-4o-mini-tts has them all; tts-1 lacks ballad, verse, marin and cedar). */
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'cedar', 'coral', 'echo', 'fable', 'marin', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const;

const params = z.object({
  prompt: z.string().trim().min(1).max(4000).describe('What the video is about, as plain text (not JSON): the message, the audience, the tone.'),
  voice: z
    .string()
    .trim()
    .refine((value) => (OPENAI_VOICES as readonly string[]).includes(value) || /^voice_[A-Za-z0-9]+$/.test(value), {
      message: `must be a voice id from videoFunctionTool loadVoices (${OPENAI_VOICES.join(', ')}) or a custom OpenAI voice id (voice_...)`,
    })
    .describe('Voice id of the voice-over: call videoFunctionTool with functionName "loadVoices" to list them.'),
});
type SlidesParams = z.output<typeof params>;

const plannedSlides = z.object({
  slides: z
    .array(z.object({ imagePrompt: z.string().trim().min(1), voiceText: z.string().trim().min(1).max(600) }))
    .min(3)
    .max(5),
});
type Plan = z.output<typeof plannedSlides>;

/** The structured-output schema sent to the chat model (strict mode: every property required, nothing else allowed). */
const PLAN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['slides'],
  properties: {
    slides: {
      type: 'array',
      minItems: 3,
      maxItems: 5,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['imagePrompt', 'voiceText'],
        properties: {
          imagePrompt: { type: 'string', description: 'A detailed description of one picture, with no text, letters or logos in it.' },
          voiceText: { type: 'string', description: 'What the narrator says over this slide: one or two short sentences, at most 30 words.' },
        },
      },
    },
  },
} as const;

const PLAN_TRIES = 3;

async function planSlides(context: GenerationContext, prompt: string): Promise<Plan> {
  const openai = context.clients.openai!;
  const shape = context.output === 'vertical' ? 'vertical (9:16)' : 'horizontal (16:9)';
  let problem = '';
  for (let attempt = 0; attempt < PLAN_TRIES; attempt++) {
    const outcome = await context.step(
      `plan:${attempt}`,
      async (): Promise<{ plan?: Plan; problem?: string }> => {
        let completion;
        try {
          completion = await openai.chat.completions.create({
            model: context.settings.models.openaiChat,
            messages: [
              {
                role: 'system',
                content:
                  `You plan short narrated slideshow videos for social media. Split the user's idea into 3 to 5 slides that tell it in order. ` +
                  `For each slide write imagePrompt, a ${shape} picture described in detail with no text in it, and voiceText, what the narrator ` +
                  'says over it (one or two short sentences, at most 30 words), in the language of the request.',
              },
              { role: 'user', content: prompt },
            ],
            response_format: { type: 'json_schema', json_schema: { name: 'slides', strict: true, schema: PLAN_SCHEMA } },
          });
        } catch (error) {
          throw openAiError(error, 'the slide plan', context.settings);
        }
        const choice = completion.choices[0];
        if (choice?.message.refusal) throw new ModelRefusal('OpenAI', choice.message.refusal);
        if (choice?.finish_reason === 'content_filter') throw new ModelRefusal('OpenAI', 'the content filter stopped the slide plan');
        let parsed: unknown;
        try {
          parsed = JSON.parse(choice?.message.content ?? '');
        } catch {
          return { problem: 'the answer was not JSON' };
        }
        const plan = plannedSlides.safeParse(parsed);
        return plan.success ? { plan: plan.data } : { problem: plan.error.issues[0]?.message ?? 'the answer did not match the schema' };
      },
      { usage: 'openai_chat' },
    );
    if (outcome.plan) return outcome.plan;
    problem = outcome.problem ?? '';
  }
  throw new ModelFailure(`The chat model did not answer a usable slide plan in ${PLAN_TRIES} tries (${problem}).`, 'Try again, or rephrase the prompt more simply.');
}

async function speak(context: GenerationContext, index: number, text: string, voice: string): Promise<{ file: string; duration: number }> {
  return context.step(
    `voice:${index}`,
    async () => {
      let bytes: Buffer;
      try {
        const response = await context.clients.openai!.audio.speech.create({ model: context.settings.models.openaiSpeech, voice, input: text, response_format: 'mp3' });
        bytes = Buffer.from(await response.arrayBuffer());
      } catch (error) {
        throw openAiError(error, 'the voice-over', context.settings);
      }
      const file = `voice-${index}.mp3`;
      await fs.promises.writeFile(path.join(context.workDir, file), bytes);
      let duration: number;
      try {
        duration = await audioDuration(path.join(context.workDir, file));
      } catch (error) {
        throw new ModelFailure(`The voice-over OpenAI answered could not be read: ${(error as Error).message}.`, 'Try again; check OPENAI_TTS_MODEL if it persists.');
      }
      return { file, duration };
    },
    { usage: 'openai_speech' },
  );
}

export const imageTextSlides: Generator<SlidesParams> = {
  identifier: 'image-text-slides',
  title: 'Narrated image slides',
  description:
    'A short narrated slideshow (3–5 slides, about 15–40 s): each slide is a generated picture with a voice-over and its text as captions, ' +
    'cross-faded, as an MP4 (1080x1920 vertical or 1920x1080 horizontal). Get a voice id from videoFunctionTool loadVoices first.',
  kind: 'video',
  outputs: ['vertical', 'horizontal'],
  params,
  missingSettings: (settings) => [...new Set([...(settings.openai ? [] : ['OPENAI_API_KEY']), ...missingImageSettings(settings)])],
  models: (settings) => [`openai:${settings.models.openaiChat}`, imageModel(settings), `openai:${settings.models.openaiSpeech}`],
  promptOf: (input) => input.prompt,
  costs: '1 chat call (up to 3 when the plan comes back unusable) + 1 image call and 1 text-to-speech call per slide (3–5 slides); the video is composed locally',
  functions: {
    loadVoices: {
      description: 'The voices of the voice-over: {voices: [{id, name}]}; pass an id as the voice parameter.',
      output: '{voices: [{id, name}]}',
      run: async () => ({ voices: OPENAI_VOICES.map((id) => ({ id, name: id[0].toUpperCase() + id.slice(1) })) }),
    },
  },
  async generate(input, context) {
    const orientation = context.output === 'horizontal' ? 'horizontal' : 'vertical';
    await context.progress(0.05, 'Planning the slides');
    const plan = await planSlides(context, input.prompt);
    const count = plan.slides.length;
    let finished = 0;
    await context.progress(0.15, `Drawing ${count} pictures and recording ${count} voice-overs`);
    const slides: Slide[] = new Array(count);
    await runLimited(
      2,
      plan.slides.map((slide, index) => async () => {
        const [image, voice] = await settleAll<unknown>([
          drawImage(context, { prompt: slide.imagePrompt, orientation, step: `image:${index}`, file: `slide-${index}` }),
          speak(context, index, slide.voiceText, input.voice),
        ]);
        const recorded = voice as { file: string; duration: number };
        slides[index] = { image: image as string, audio: recorded.file, duration: recorded.duration, caption: slide.voiceText };
        finished += 1;
        await context.progress(0.15 + (0.65 * finished) / count, `Slide ${finished} of ${count} ready`);
      }),
    );
    const missing = slides.flatMap((slide) => [slide.image, slide.audio]).filter((file) => !fs.existsSync(path.join(context.workDir, file)));
    if (missing.length > 0) {
      throw new ModelFailure(
        `The pictures and voice-overs made before a restart are gone (${missing.join(', ')}), and they are not paid for twice.`,
        'Keep DATA_DIR on persistent storage; start a new generation.',
      );
    }
    await context.progress(0.85, 'Composing the video');
    const video = await composeSlides(context.workDir, slides, orientation, 'slides.mp4');
    return { file: video.file, name: 'slides.mp4', warnings: video.warnings };
  },
};
