import { medianLineHeight } from './text.ts';

/**
 * When a first OCR pass suggests the text is too small for the model, how much larger to read the
 * image again. The model wants glyphs of roughly 20 px and more; screenshots and crops often carry
 * 7-12 px text, which it misreads or misses at native size. Measured on rendered text (DejaVu
 * Sans/Serif/Mono): line boxes of 8-11 px lost 1-67% of their characters and were read without
 * error at 2x; 6-7 px text was not found at all and needed 3x. Above 12 px, upscaling only cost
 * time (and once a few characters).
 */

const SMALL_LINE_PX = 12;
const TINY_LINE_PX = 9;
/** A pass this unsure about lines this short is likely tiny text read as garbage. */
const UNSURE_CONFIDENCE = 50;
const UNSURE_LINE_PX = 20;
/** A pass that found no text is retried only on small images, where tiny text is the likely reason. */
const SMALL_IMAGE_PIXELS = 500_000;
/** Enlargements smaller than this change too little to be worth a second pass. */
const MIN_USEFUL_FACTOR = 1.5;

export interface FirstPass {
  confidence: number;
  tsv: string;
}

export function smallTextUpscaleFactor(
  pass: FirstPass,
  image: { width: number; height: number },
  maxSide: number,
): number | null {
  const lineHeight = medianLineHeight(pass.tsv);
  let wanted: number | null = null;
  if (lineHeight === null) wanted = image.width * image.height <= SMALL_IMAGE_PIXELS ? 3 : null;
  else if (lineHeight < TINY_LINE_PX) wanted = 3;
  else if (lineHeight < SMALL_LINE_PX) wanted = 2;
  else if (pass.confidence < UNSURE_CONFIDENCE && lineHeight < UNSURE_LINE_PX) wanted = 3;
  if (wanted === null) return null;

  const factor = Math.min(wanted, maxSide / Math.max(image.width, image.height));
  return factor >= MIN_USEFUL_FACTOR ? factor : null;
}
