// The generators: the image generator behind generateImageTool, and the video generators of generateVideoOptions.
import type { GenerationSettings } from '../src/config.js';
import { imageGenerator } from './image.js';
import { imageTextSlides } from './image-text-slides.js';
import { veo3 } from './veo3.js';
import type { Generator } from './types.js';

export { imageGenerator };

export const videoGenerators: readonly Generator[] = [imageTextSlides, veo3] as unknown as readonly Generator[];

/** Any generator by identifier (`image` included): the generation job looks its generator up here. */
export function generatorOf(identifier: string): Generator | undefined {
  if (identifier === imageGenerator.identifier) return imageGenerator as unknown as Generator;
  return videoGenerators.find((generator) => generator.identifier === identifier);
}

/** A sentence naming the settings that enable a generator, or undefined when it is available. */
export function unavailableReason(generator: Generator, settings: GenerationSettings): string | undefined {
  const missing = generator.missingSettings(settings);
  if (missing.length === 0) return undefined;
  return `The ${generator.identifier} generator needs ${missing.join(' and ')} to be set on this Herald.`;
}
