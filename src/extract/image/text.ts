/**
 * Text returned to clients: the engine's output without the blank edges and trailing spaces it
 * leaves, line breaks kept (they carry the layout: lines, and blank lines between blocks).
 */
export function cleanOcrText(raw: string): string {
  return raw
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/** Row level of text lines in Tesseract's TSV output (1 page, 2 block, 3 paragraph, 4 line, 5 word). */
const TSV_LINE_LEVEL = '4';
/** Column of the box height in a TSV row. */
const TSV_HEIGHT_COLUMN = 9;

/**
 * Median height, in pixels, of the text lines Tesseract found (from its TSV output), or null when
 * it found none. A line box spans ascenders to descenders, so it is close to the font size.
 */
export function medianLineHeight(tsv: string): number | null {
  const heights: number[] = [];
  for (const row of tsv.split('\n')) {
    const columns = row.split('\t');
    if (columns[0] !== TSV_LINE_LEVEL) continue;
    const height = Number(columns[TSV_HEIGHT_COLUMN]);
    if (Number.isFinite(height) && height > 0) heights.push(height);
  }
  if (heights.length === 0) return null;
  heights.sort((a, b) => a - b);
  return heights[Math.floor(heights.length / 2)];
}
