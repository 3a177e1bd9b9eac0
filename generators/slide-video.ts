// The slideshow MP4 of image-text-slides, composed by the ffmpeg binary Herald ships (@ffmpeg-installer/ffmpeg, an ffmpeg 4.1
// static build with libx264, AAC, libfreetype and fontconfig). Each slide is shown for its voice-over plus a short pause,
// slides cross-fade (each one fades in over the previous: that ffmpeg predates the xfade filter), the voice text is burned
// in as captions (drawtext, one centred line per filter, text read from files so nothing needs escaping), and the result is
// H.264 main / AAC at 30 fps, 1080x1920 or 1920x1080: the spec's recommended video.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import type { Orientation } from './types.js';

const FRAME: Record<Exclude<Orientation, 'square'>, { width: number; height: number }> = {
  vertical: { width: 1080, height: 1920 },
  horizontal: { width: 1920, height: 1080 },
};

const FPS = 30;
/** Cross-fade length, and the silence before and after each voice-over. */
const FADE = 0.5;
const LEAD = 0.5;
const TAIL = 0.5;
const COMPOSE_TIMEOUT_MS = 15 * 60_000;

export interface Slide {
  /** Image and voice-over files inside the work directory. */
  image: string;
  audio: string;
  /** Seconds of the voice-over. */
  duration: number;
  caption: string;
}

/** Runs ffmpeg in `cwd`; answers its log. `probe`: only reading an input, so the "no output file" exit is expected. */
function ffmpeg(args: string[], cwd: string, options: { timeoutMs?: number; probe?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(ffmpegInstaller.path, ['-hide_banner', '-nostdin', ...args], { cwd, timeout: options.timeoutMs ?? COMPOSE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error || (options.probe && !error.killed)) return resolve(stderr);
      // The static build's fontconfig complains about newer configuration files on every run: not the error.
      const lines = stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('Fontconfig'));
      reject(new Error(error.killed ? 'ffmpeg took too long and was stopped' : lines.slice(-3).join(' ').slice(0, 500) || error.message));
    });
  });
}

/** Seconds of an audio file, from the container's duration as ffmpeg reads it. */
export async function audioDuration(file: string): Promise<number> {
  const stderr = await ffmpeg(['-i', path.basename(file)], path.dirname(file), { timeoutMs: 60_000, probe: true });
  const match = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(stderr);
  if (!match) throw new Error(`the duration of ${path.basename(file)} could not be read`);
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

/** Splits a caption into lines of at most `width` characters (words longer than that get their own line). */
function wrapCaption(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.replace(/\s+/g, ' ').trim().split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

interface Caption {
  lines: string[];
  fontSize: number;
}

/** The caption lines and font size of a slide: the biggest size (down to a floor) at which the text fits in 6 lines. */
function layoutCaption(text: string, width: number, base: number): Caption {
  for (let fontSize = base; ; fontSize -= 4) {
    // DejaVu Sans (fontconfig's usual "Sans") averages a little over half an em per character.
    const lines = wrapCaption(text, Math.floor((width * 0.88) / (fontSize * 0.56)));
    if (lines.length <= 6 || fontSize <= 28) return { lines: lines.slice(0, 8), fontSize };
  }
}

function captionFilters(slides: Slide[], offsets: number[], frame: { width: number; height: number }, workDir: string): string[] {
  const filters: string[] = [];
  slides.forEach((slide, index) => {
    const caption = layoutCaption(slide.caption, frame.width, frame.width > frame.height ? 48 : 56);
    const lineHeight = Math.round(caption.fontSize * 1.45);
    const bottom = Math.round(frame.height * (frame.width > frame.height ? 0.08 : 0.12));
    const start = (offsets[index] + FADE / 2).toFixed(3);
    const end = (offsets[index] + LEAD + slide.duration + TAIL - 0.05).toFixed(3);
    caption.lines.forEach((line, lineIndex) => {
      const file = `caption-${index}-${lineIndex}.txt`;
      fs.writeFileSync(path.join(workDir, file), line);
      const y = frame.height - bottom - (caption.lines.length - lineIndex) * lineHeight;
      filters.push(
        `drawtext=textfile=${file}:expansion=none:font=Sans:fontsize=${caption.fontSize}:fontcolor=white:box=1:boxcolor=black@0.55:boxborderw=${Math.round(caption.fontSize / 4)}` +
          `:x=(w-text_w)/2:y=${y}:enable='between(t,${start},${end})'`,
      );
    });
  });
  return filters;
}

export interface ComposedVideo {
  file: string;
  warnings: string[];
}

/** Composes the slides into `workDir/<name>`. Without usable fonts the video is made without captions, with a warning. */
export async function composeSlides(workDir: string, slides: Slide[], orientation: Exclude<Orientation, 'square'>, name: string): Promise<ComposedVideo> {
  const frame = FRAME[orientation];
  const { default: sharp } = await import('sharp');
  // Pictures are scaled to fill the frame (cropping the overflow) once, here, rather than on every video frame.
  for (const [index, slide] of slides.entries()) {
    await sharp(path.join(workDir, slide.image)).resize(frame.width, frame.height, { fit: 'cover' }).png().toFile(path.join(workDir, `frame-${index}.png`));
  }
  const lengths = slides.map((slide) => LEAD + slide.duration + TAIL);
  const offsets = lengths.map((_, index) => lengths.slice(0, index).reduce((sum, value) => sum + value, 0));
  const total = lengths.reduce((sum, value) => sum + value, 0);
  const inputs: string[] = [];
  slides.forEach((_, index) => {
    // Every slide but the last stays on screen while the next one fades in over it.
    const seconds = lengths[index] + (index < slides.length - 1 ? FADE : 0);
    inputs.push('-loop', '1', '-framerate', String(FPS), '-t', seconds.toFixed(3), '-i', `frame-${index}.png`);
  });
  for (const slide of slides) inputs.push('-i', slide.audio);
  const count = slides.length;
  const graph: string[] = [`color=c=black:s=${frame.width}x${frame.height}:r=${FPS}:d=${total.toFixed(3)}[base]`];
  slides.forEach((_, index) => {
    const fade = index === 0 ? '' : `,fade=t=in:st=0:d=${FADE}:alpha=1`;
    graph.push(`[${index}:v]setsar=1,format=yuva420p${fade},setpts=PTS-STARTPTS+${offsets[index].toFixed(3)}/TB[v${index}]`);
  });
  slides.forEach((_, index) => {
    graph.push(`[${index === 0 ? 'base' : `o${index - 1}`}][v${index}]overlay=eof_action=pass${index === count - 1 ? ',format=yuv420p[composed]' : `[o${index}]`}`);
  });
  slides.forEach((_, index) => {
    const delay = Math.round(LEAD * 1000);
    graph.push(`[${count + index}:a]aresample=44100,aformat=channel_layouts=stereo,adelay=${delay}|${delay},apad,atrim=0:${lengths[index].toFixed(3)}[a${index}]`);
  });
  graph.push(`${slides.map((_, index) => `[a${index}]`).join('')}concat=n=${count}:v=0:a=1[aout]`);
  const output = [
    '-map', '[vout]', '-map', '[aout]',
    '-c:v', 'libx264', '-profile:v', 'main', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-r', String(FPS),
    '-c:a', 'aac', '-b:a', '128k', '-ar', '44100', '-movflags', '+faststart', '-t', total.toFixed(3), '-y', name,
  ];
  const run = (captions: string[]) => {
    const video = captions.length > 0 ? `[composed]${captions.join(',')}[vout]` : '[composed]null[vout]';
    return ffmpeg([...inputs, '-filter_complex', [...graph, video].join(';'), ...output], workDir);
  };
  const warnings: string[] = [];
  try {
    await run(captionFilters(slides, offsets, frame, workDir));
  } catch (error) {
    if (!/font|drawtext/i.test((error as Error).message)) throw error;
    warnings.push(`The captions could not be drawn (${(error as Error).message}); the video has none. Install a font (e.g. fonts-dejavu-core) on the Herald host.`);
    await run([]);
  }
  return { file: path.join(workDir, name), warnings };
}
