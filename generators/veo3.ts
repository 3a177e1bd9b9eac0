// veo3: Google's Veo 3 through fal's queue API (submit, status, result). Without pictures fal-ai/veo3 (text to video); one
// picture is animated by fal-ai/veo3/image-to-video (`image_url`); two or three are subject references for
// fal-ai/veo3.1/reference-to-video (`image_urls`). The orientation maps to `aspect_ratio` 9:16 or 16:9; duration (8 s),
// resolution (720p) and audio (on) are the models' defaults.
// https://fal.ai/models/fal-ai/veo3/api, https://fal.ai/models/fal-ai/veo3/image-to-video/api,
// https://fal.ai/models/fal-ai/veo3.1/reference-to-video/api — result {video: {url, content_type, file_name, file_size}}.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { GenerationSettings } from '../src/config.js';
import { falError } from './clients.js';
import { awaitFalResult, submitFal } from './fal-queue.js';
import { ModelFailure, settleAll, type Generator, type LibraryImage } from './types.js';

const imageRef = z.union([
  z.string().trim().min(1),
  z.object({ id: z.string().trim().optional(), path: z.string().trim().optional() }).refine((value) => value.id || value.path, 'give the id or the path of the picture'),
]);

const params = z.object({
  prompt: z.string().trim().min(1).max(4000).describe('The scene, the action, the camera and the sound, as plain text.'),
  images: z
    .array(imageRef)
    .max(3, 'at most 3 images')
    .optional()
    .describe(
      'Up to 3 pictures of the media library ({id, path} from an upload or generateImageTool, or just the id or the path). One picture is animated; two or three are references for the subjects.',
    ),
});
type Veo3Params = z.output<typeof params>;

const modelFor = (settings: GenerationSettings, images: number) =>
  images === 0 ? settings.models.veo3 : images === 1 ? settings.models.veo3Image : settings.models.veo3Reference;

const videoResult = z.object({ video: z.object({ url: z.string().min(1) }) });

export const veo3: Generator<Veo3Params> = {
  identifier: 'veo3',
  title: 'Veo 3 video',
  description:
    'An 8-second video with sound from a prompt, by Google Veo 3 (through fal), optionally from up to 3 pictures of the media library. ' +
    'Vertical is 9:16, horizontal 16:9 (720p). Takes a few minutes.',
  kind: 'video',
  outputs: ['vertical', 'horizontal'],
  params,
  missingSettings: (settings) => (settings.fal ? [] : ['FAL_KEY']),
  models: (settings, input) => [`fal:${modelFor(settings, input.images?.length ?? 0)}`],
  promptOf: (input) => input.prompt,
  costs: '1 fal Veo 3 request (billed per second of video: about $0.20/s without audio, $0.40/s with audio, 8 s by default); status checks and picture uploads are free',
  async generate(input, context) {
    const fal = context.clients.fal!;
    // The tool resolved the pictures to this organization's library files before the generation was recorded.
    const images = (input.images ?? []) as LibraryImage[];
    const model = modelFor(context.settings, images.length);
    await context.progress(0.05, images.length > 0 ? 'Sending the pictures to fal' : 'Sending the request to fal');
    // fal fetches inputs by URL: a public library URL is given as is, anything else is uploaded to fal's storage first.
    const urls = await settleAll(
      images.map((image, index) =>
        context.step(
          `upload:${index}`,
          async () => {
            const loaded = await context.libraryImage(image);
            if (loaded.publicUrl) return loaded.publicUrl;
            return fal.storage.upload(new Blob([new Uint8Array(loaded.bytes)], { type: loaded.mimeType })).catch((error: unknown) => {
              throw falError(error, `the upload of picture ${index + 1}`, context.settings);
            });
          },
          { free: true },
        ),
      ),
    );
    const request = {
      prompt: input.prompt,
      aspect_ratio: context.output === 'vertical' ? '9:16' : '16:9',
      ...(urls.length === 1 ? { image_url: urls[0] } : {}),
      ...(urls.length > 1 ? { image_urls: urls } : {}),
    };
    const { requestId } = await submitFal(context, 'submit', model, request, 'the video', 'fal_video');
    // Reading the result and downloading the video are free, so they are simply done again after a restart.
    const result = videoResult.safeParse(await awaitFalResult(context, model, requestId, 'the video', { queued: 0.2, running: 0.5 }));
    if (!result.success) throw new ModelFailure(`fal answered a video result Herald cannot read (${model}).`, 'Check the FAL_VEO3_* model settings.');
    await context.progress(0.9, 'Downloading the video');
    const video = await context.download(result.data.video.url);
    const file = path.join(context.workDir, 'veo3.mp4');
    await fs.promises.writeFile(file, video.bytes);
    return { file, name: 'veo3.mp4' };
  },
};
