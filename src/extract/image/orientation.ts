import { yieldToEventLoop } from './normalize.ts';
import type { NormalizedImage } from './normalize.ts';

/**
 * Which way up a page's text most likely stands, judged from the shape of its lines before any
 * recognition, so that a page scanned upside down (or turned 270°) is read the right way up at
 * once instead of being read as garbage first and then again turned.
 *
 * The cue is the one a reader of Latin, Greek or Cyrillic print sees at a glance: in a line of
 * text, the ink above the band of the small letters (ascenders: b d f h k l t, capitals, digits)
 * far outweighs the ink below it (descenders: g j p q y). Upside down, the excess is below. Text
 * without that asymmetry (all capitals, figures, most CJK), a single line, or a photograph gives
 * no verdict.
 *
 * The hint only orders the reads: the confidence check after the first read still tries the page
 * the other way up when that read looks like garbage, so a wrong hint costs a read, never the text.
 */
export type OrientationHint =
  /** Read as it stands: upright, or turned 90° clockwise (the layout analysis turns those itself). */
  | 'as_is'
  /** Upside down, or turned 270° clockwise: to be turned by 180° before reading. */
  | 'turn_180'
  /** No clear verdict. */
  | 'unknown';

/** What the hint is decided from, for each direction the lines could run in. */
export interface OrientationEvidence {
  hint: OrientationHint;
  horizontal: LineEvidence;
  vertical: LineEvidence;
}

export interface LineEvidence {
  /** Share of the inked extent across the lines that is blank (the space between lines). */
  gapShare: number;
  /** Median thickness of the lines, in pixels. */
  thickness: number;
  /** How many times longer the text runs along the lines than the lines are thick. */
  elongation: number;
  /** Lines measured, and their ink before and after their cores (in coordinate order). */
  lines: number;
  before: number;
  after: number;
  /** Positions (rows or columns) before and after the cores, added over the lines. */
  beforeSpan: number;
  afterSpan: number;
  /** Lines with clearly more extender ink before their core, and after it. */
  votesBefore: number;
  votesAfter: number;
}

/** A pixel darker than this is ink (the image is normalised: dark text on white). */
const INK_BELOW = 128;
/**
 * The page is measured in strips across the lines: first in halves, so two columns whose lines do
 * not align are measured apart; then, without a verdict, in quarters and eighths, where the lines
 * of a page scanned a degree or two askew drift less within a strip and stay apart.
 */
const STRIP_COUNTS = [2, 4, 8] as const;
/** Ink is counted in this many strips, merged into the counts above (and read once more finely, for MAX_THICKENING). */
const FINEST_STRIPS = 16;
/**
 * Lines measured in a strip that come out thicker than this multiple of the same lines measured
 * in strips half as wide are a skewed page's, drifting across the strip: their extenders are
 * smeared, and such a measure gives no verdict.
 */
const MAX_THICKENING = 1.2;
/** Positions with at most this share of the strip's densest position count as blank (speckle, noise). */
const BLANK_SHARE = 0.03;
/** The lines' direction shows this much more blank between them than the other direction does... */
const DIRECTION_MARGIN = 1.3;
/**
 * ...and at least this share of blank across them (0.19-0.98 on the real pages measured; runs
 * of a skewed page merging into each other left 0.13).
 */
const MIN_GAP_SHARE = 0.15;
/**
 * ...and is this many times longer than it is thick. Letters taken for lines (a single line of
 * text measured the wrong way) are barely longer than thick; a line of a few words is far longer.
 */
const MIN_ELONGATION = 4;
/** Runs shorter than this across the lines (in pixels) are dots, rules or noise, not lines of text. */
const MIN_LINE_PX = 5;
/** Runs thinner or thicker than these multiples of the median run are not taken for lines of text. */
const LINE_THICKNESS_RANGE = [0.5, 2] as const;
/** Positions with at least this share of a line's densest position form its core (the x-height band). */
const CORE_SHARE = 0.5;
/** Lines that must be measured before a verdict. */
const MIN_LINES = 3;
/**
 * The heavier side's extenders must reach, on average, this share of a line's thickness beyond
 * its core. Lower-case text measured 0.12-0.38; all capitals and figures, whose only "extenders"
 * are a pixel of anti-aliasing or a comma, 0-0.09.
 */
const MIN_EXTENDER_SPAN = 0.1;
/**
 * The side with more extender ink must have this many times the other's. Upright text measured
 * 1.8 (photographed pages, the lowest) to 16 (an invoice) on generated pages. All capitals can
 * show any ratio, from a few pixels: MIN_EXTENDER_SPAN is what leaves them without a verdict.
 */
const VERDICT_RATIO = 1.6;

/** A line votes for the side whose extender ink is this many times the other's. */
const LINE_VOTE_RATIO = 1.2;
/** The share of the voting lines that must agree with the page's verdict (noisy photographed lines agreed at 0.7). */
const MIN_AGREEMENT = 0.65;

/** Pixels counted between two yields to the event loop (this runs on the main thread). */
const PIXELS_PER_SLICE = 1 << 20;

export async function orientationHint(image: Pick<NormalizedImage, 'pixels' | 'width' | 'height'>): Promise<OrientationHint> {
  return (await orientationEvidence(image)).hint;
}

export async function orientationEvidence(image: Pick<NormalizedImage, 'pixels' | 'width' | 'height'>): Promise<OrientationEvidence> {
  const { pixels, width, height } = image;
  const stripWidth = Math.ceil(width / FINEST_STRIPS);
  const stripHeight = Math.ceil(height / FINEST_STRIPS);
  // Ink per row within each vertical strip (for horizontal lines), and per column within each
  // horizontal strip (for vertical lines).
  const rowInk = new Float64Array(FINEST_STRIPS * height);
  const columnInk = new Float64Array(FINEST_STRIPS * width);
  const rowsPerSlice = Math.max(1, Math.floor(PIXELS_PER_SLICE / width));
  for (let y = 0; y < height; y += 1) {
    if (y > 0 && y % rowsPerSlice === 0) await yieldToEventLoop();
    const offset = y * width;
    const columnStrip = Math.floor(y / stripHeight) * width;
    for (let x = 0; x < width; x += 1) {
      if (pixels[offset + x] >= INK_BELOW) continue;
      rowInk[Math.floor(x / stripWidth) * height + y] += 1;
      columnInk[columnStrip + x] += 1;
    }
  }
  const rows = strips(rowInk, height);
  const columns = strips(columnInk, width);
  const measured = new Map<number, { horizontal: LineEvidence; vertical: LineEvidence }>();
  const measure = (count: number) => {
    let lines = measured.get(count);
    if (!lines) {
      const rowProfiles = merged(rows, count);
      const columnProfiles = merged(columns, count);
      // Lines along the rows run as far as the ink spreads across the columns, and the other way round.
      lines = {
        horizontal: measureLines(rowProfiles, inkedExtent(columnProfiles) / count),
        vertical: measureLines(columnProfiles, inkedExtent(rowProfiles) / count),
      };
      measured.set(count, lines);
    }
    return lines;
  };
  const unsmeared = (lines: LineEvidence, finer: LineEvidence) => lines.thickness <= finer.thickness * MAX_THICKENING;

  let evidence!: OrientationEvidence;
  for (const count of STRIP_COUNTS) {
    const { horizontal, vertical } = measure(count);
    const finer = measure(count * 2);
    let hint: OrientationHint = 'unknown';
    if (runsThisWay(horizontal, vertical) && unsmeared(horizontal, finer.horizontal)) {
      // Upright lines: the tops of the letters point to smaller y.
      hint = hintFromTops(horizontal, 'start');
    } else if (runsThisWay(vertical, horizontal) && unsmeared(vertical, finer.vertical)) {
      // Turned 90° clockwise, the tops point to larger x; turned 270°, to smaller x.
      hint = hintFromTops(vertical, 'end');
    }
    evidence = { hint, horizontal, vertical };
    if (hint !== 'unknown') break;
  }
  return evidence;
}

/** `as_is` when the extenders stand on the side where an upright or 90° page has its tops, `turn_180` on the other. */
function hintFromTops(lines: LineEvidence, readableTops: 'start' | 'end'): OrientationHint {
  const side = extenderSide(lines);
  return side === null ? 'unknown' : side === readableTops ? 'as_is' : 'turn_180';
}

function strips(ink: Float64Array, length: number): Float64Array[] {
  return Array.from({ length: FINEST_STRIPS }, (_, strip) => ink.subarray(strip * length, (strip + 1) * length));
}

/** The profiles of `count` strips, each the sum of adjacent finest strips. */
function merged(profiles: Float64Array[], count: number): Float64Array[] {
  const per = profiles.length / count;
  if (per === 1) return profiles;
  return Array.from({ length: count }, (_, strip) => {
    const sum = new Float64Array(profiles[0].length);
    for (let j = strip * per; j < (strip + 1) * per; j += 1) for (let i = 0; i < sum.length; i += 1) sum[i] += profiles[j][i];
    return sum;
  });
}

/** Distance from the first to the last inked position in any of the profiles. */
function inkedExtent(profiles: Float64Array[]): number {
  let first = Infinity;
  let last = -1;
  for (const profile of profiles) {
    for (let i = 0; i < profile.length; i += 1) {
      if (profile[i] === 0) continue;
      first = Math.min(first, i);
      last = Math.max(last, i);
    }
  }
  return last < 0 ? 0 : last - first + 1;
}

/** Whether the text's lines run in the direction of `lines` rather than of `other`. */
function runsThisWay(lines: LineEvidence, other: LineEvidence): boolean {
  return lines.gapShare >= MIN_GAP_SHARE && lines.gapShare > other.gapShare * DIRECTION_MARGIN && lines.elongation >= MIN_ELONGATION;
}

/**
 * Takes each profile (ink per position across the supposed lines) as lines separated by blank
 * space: the share of blank, how long the lines run against their median thickness, and the ink
 * of each line before and after its core.
 */
function measureLines(profiles: Float64Array[], lengthAlong: number): LineEvidence {
  let blankPositions = 0;
  let extentPositions = 0;
  const runs: Run[] = [];
  for (const profile of profiles) {
    let peak = 0;
    for (let i = 0; i < profile.length; i += 1) peak = Math.max(peak, profile[i]);
    if (peak === 0) continue;
    const blank = peak * BLANK_SHARE;
    let first = 0;
    while (profile[first] <= blank) first += 1;
    let last = profile.length - 1;
    while (profile[last] <= blank) last -= 1;
    extentPositions += last - first + 1;

    let i = first;
    while (i <= last) {
      if (profile[i] <= blank) {
        blankPositions += 1;
        i += 1;
        continue;
      }
      const start = i;
      while (i <= last && profile[i] > blank) i += 1;
      if (i - start >= MIN_LINE_PX) runs.push(measureRun(profile, start, i - 1));
    }
  }
  const thicknesses = runs.map((run) => run.thickness).sort((a, b) => a - b);
  const thickness = thicknesses[Math.floor(thicknesses.length / 2)] ?? 0;
  const evidence = { before: 0, after: 0, beforeSpan: 0, afterSpan: 0, lines: 0, votesBefore: 0, votesAfter: 0 };
  for (const run of runs) {
    // A figure, or a block of lines that touch, makes a run far thicker than a line; a rule or a
    // row of dots, far thinner: neither has ascenders.
    if (run.thickness < thickness * LINE_THICKNESS_RANGE[0] || run.thickness > thickness * LINE_THICKNESS_RANGE[1]) continue;
    evidence.before += run.before;
    evidence.after += run.after;
    evidence.beforeSpan += run.beforeSpan;
    evidence.afterSpan += run.afterSpan;
    evidence.lines += 1;
    if (run.before > run.after * LINE_VOTE_RATIO) evidence.votesBefore += 1;
    else if (run.after > run.before * LINE_VOTE_RATIO) evidence.votesAfter += 1;
  }
  return {
    gapShare: extentPositions === 0 ? 0 : blankPositions / extentPositions,
    thickness,
    elongation: thickness === 0 ? 0 : lengthAlong / thickness,
    ...evidence,
  };
}

/** One run of ink across the supposed lines: its thickness, and the ink and span either side of its core. */
interface Run {
  thickness: number;
  before: number;
  after: number;
  beforeSpan: number;
  afterSpan: number;
}

function measureRun(profile: Float64Array, start: number, end: number): Run {
  let peak = 0;
  for (let j = start; j <= end; j += 1) peak = Math.max(peak, profile[j]);
  let coreStart = start;
  while (profile[coreStart] < peak * CORE_SHARE) coreStart += 1;
  let coreEnd = end;
  while (profile[coreEnd] < peak * CORE_SHARE) coreEnd -= 1;
  let before = 0;
  for (let j = start; j < coreStart; j += 1) before += profile[j];
  let after = 0;
  for (let j = coreEnd + 1; j <= end; j += 1) after += profile[j];
  return { thickness: end - start + 1, before, after, beforeSpan: coreStart - start, afterSpan: end - coreEnd };
}

/**
 * On which side of the lines' cores the extra ink stands ('start': smaller coordinates), or null
 * when the lines are too few or too even to say.
 */
function extenderSide(lines: LineEvidence): 'start' | 'end' | null {
  const { before, after, beforeSpan, afterSpan, thickness, votesBefore, votesAfter } = lines;
  if (lines.lines < MIN_LINES) return null;
  const side = before >= after * VERDICT_RATIO ? 'start' : after >= before * VERDICT_RATIO ? 'end' : null;
  if (side === null) return null;
  const span = side === 'start' ? beforeSpan : afterSpan;
  if (span / lines.lines < thickness * MIN_EXTENDER_SPAN) return null;
  // Most lines must agree one by one: a skewed page's lines smear into runs whose two sides
  // differ by chance, and one heavy line (a formula, a figure's label) must not decide alone.
  const agreeing = side === 'start' ? votesBefore : votesAfter;
  return agreeing >= MIN_LINES && agreeing >= (votesBefore + votesAfter) * MIN_AGREEMENT ? side : null;
}
