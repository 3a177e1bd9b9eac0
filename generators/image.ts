// Image generation (generateImageTool, and the pictures of image-text-slides): OpenAI images.generate or a fal image model,
// chosen by IMAGE_GENERATOR.
// OpenAI: https://platform.openai.com/docs/api-reference/images/create — GPT image models always answer base64
// (`data[].b64_json`); sizes 1024x1024, 1024x1536, 1536x1024; a safety refusal is a 400 with code `moderation_blocked`.
// fal: https://fal.ai/models/fal-ai/flux/dev/api — queue submit {prompt, image_size, num_images, output_format,
// enable_safety_checker}, result {images: [{url, width, height, content_type}], has_nsfw_concepts: [boolean]}.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { GenerationSettings } from '../src/config.js';
import { openAiError } from './clients.js';
import { awaitFalResult, submitFal } from './fal-queue.js';
import { ModelFailure, ModelRefusal, type GenerationContext, type Generator, type Orientation } from './types.js';

const OPENAI_SIZES: Record<Orientation, string> = { square: '1024x1024', vertical: '1024x1536', horizontal: '1536x1024' };
const FAL_SIZES: Record<Orientation, string> = { square: 'square_hd', vertical: 'portrait_16_9', horizontal: 'landscape_16_9' };

/** The setting that enables image generation with the configured service (empty when set). */
export function missingImageSettings(settings: GenerationSettings): string[] {
  if (settings.imageService === 'fal') return settings.fal ? [] : ['FAL_KEY'];
  return settings.openai ? [] : ['OPENAI_API_KEY'];
}

export const imageModel = (settings: GenerationSettings) =>
  settings.imageService === 'fal' ? `fal:${settings.models.falImage}` : `openai:${settings.models.openaiImage}`;

const falImageResult = z.object({
  images: z.array(z.object({ url: z.string().min(1) })).min(1),
  has_nsfw_concepts: z.array(z.boolean()).optional(),
});

/**
 * Draws one image into `workDir/<file>` (PNG or JPEG as the model answers), once: `step` names the paid call. Answers the
 * file name.
 */
export async function drawImage(context: GenerationContext, request: { prompt: string; orientation: Orientation; step: string; file: string }): Promise<string> {
  const { settings, clients } = context;
  if (settings.imageService === 'fal') {
    const model = settings.models.falImage;
    const input = { prompt: request.prompt, image_size: FAL_SIZES[request.orientation], num_images: 1, output_format: 'png', enable_safety_checker: true };
    const { requestId } = await submitFal(context, `${request.step}:submit`, model, input, 'the image', 'fal_image');
    return context.step(
      `${request.step}:file`,
      async () => {
        const data = falImageResult.safeParse(await awaitFalResult(context, model, requestId, 'the image'));
        if (!data.success) throw new ModelFailure(`fal answered an image result Herald cannot read (${model}).`, 'Check FAL_IMAGE_MODEL: it must answer {images: [{url}]} like fal-ai/flux/dev.');
        if (data.data.has_nsfw_concepts?.[0]) throw new ModelRefusal('fal', 'the safety checker flagged the generated image as not safe for work');
        const image = await context.download(data.data.images[0].url);
        const name = `${request.file}.${image.mimeType === 'image/jpeg' ? 'jpg' : 'png'}`;
        await fs.promises.writeFile(path.join(context.workDir, name), image.bytes);
        return name;
      },
      { free: true },
    );
  }
  const openai = clients.openai!;
  return context.step(
    request.step,
    async () => {
      let response;
      try {
        response = await openai.images.generate({
          model: settings.models.openaiImage,
          prompt: request.prompt,
          n: 1,
          size: OPENAI_SIZES[request.orientation] as '1024x1024',
          ...(settings.models.openaiImageQuality === 'auto' ? {} : { quality: settings.models.openaiImageQuality }),
        });
      } catch (error) {
        throw openAiError(error, 'the image', settings);
      }
      const item = response.data?.[0];
      let bytes: Buffer;
      if (item?.b64_json) bytes = Buffer.from(item.b64_json, 'base64');
      else if (item?.url) bytes = (await context.download(item.url)).bytes;
      else throw new ModelFailure('OpenAI answered without an image.', 'Try again; if it persists, check OPENAI_IMAGE_MODEL.');
      const name = `${request.file}.${bytes[0] === 0xff && bytes[1] === 0xd8 ? 'jpg' : 'png'}`;
      await fs.promises.writeFile(path.join(context.workDir, name), bytes);
      return name;
    },
    { usage: 'openai_image' },
  );
}

const imageParams = z.object({ prompt: z.string().trim().min(1).max(4000) });
type ImageParams = z.output<typeof imageParams>;

/** generateImageTool's generator: one square image. */
export const imageGenerator: Generator<ImageParams> = {
  identifier: 'image',
  title: 'Image',
  description: 'One square image (1024x1024) from a prompt.',
  kind: 'image',
  outputs: ['square'],
  params: imageParams,
  missingSettings: missingImageSettings,
  models: (settings) => [imageModel(settings)],
  promptOf: (params) => params.prompt,
  costs: '1 image call (OpenAI images.generate, or one fal image request)',
  async generate(params, context) {
    await context.progress(0.1, 'Drawing the image');
    const name = await drawImage(context, { prompt: params.prompt, orientation: 'square', step: 'image', file: 'image' });
    await context.progress(0.9, 'Storing the image');
    return { file: path.join(context.workDir, name), name: `generated-${name}` };
  },
};
