/**
 * Pure assembly of the /v1/pdf answer: counts, file size, creation date and key order.
 * No pdf.js here, so it is cheap to test and to call from any thread.
 */
import type { PdfMetadata, PdfResult } from './types.ts';

/** Whitespace-separated tokens (Unicode whitespace included, e.g. NBSP and ideographic space). */
export function countWords(text: string): number {
  return text.match(/\S+/gu)?.length ?? 0;
}

/** Unicode code points, so an astral character such as 𠮷 counts once. */
export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** "183.52 KB": bytes / 1024 with two decimals, the original service's format. */
export function formatFileSize(bytes: number): string {
  return `${(bytes / 1024).toFixed(2)} KB`;
}

// D:YYYY[MM[DD[HH[mm[SS]]]]][(Z|+|-)[HH['][mm[']]]] — the PDF 1.7 §7.9.4 date, with the usual
// producer deviations: missing "D:" prefix, missing apostrophes, "Z00'00'" and trailing spaces.
const PDF_DATE =
  /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(?:(\d{2})'?(?:(\d{2})'?)?)?)?\s*$/;

/**
 * Converts a PDF date string to UTC as `D:YYYYMMDDHHmmssZ`. A date without an offset is taken as
 * UTC. Returns undefined for anything that is not a real calendar date, so the field can be omitted.
 */
export function pdfDateToUtc(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const match = PDF_DATE.exec(raw.trim());
  if (!match) return undefined;
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, sign, offHourText, offMinuteText] = match;
  const year = Number(yearText);
  const month = Number(monthText ?? 1);
  const day = Number(dayText ?? 1);
  const hour = Number(hourText ?? 0);
  const minute = Number(minuteText ?? 0);
  const second = Number(secondText ?? 0);
  const offsetHours = Number(offHourText ?? 0);
  const offsetMinutes = Number(offMinuteText ?? 0);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;

  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day); // setUTCFullYear keeps years 0-99 literal, unlike Date.UTC
  local.setUTCHours(hour, minute, second, 0);
  if (local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day) return undefined; // e.g. 20230230

  const direction = sign === '+' ? 1 : sign === '-' ? -1 : 0; // Z and no offset are both UTC
  const utc = new Date(local.getTime() - direction * (offsetHours * 60 + offsetMinutes) * 60_000);
  const year4 = utc.getUTCFullYear();
  if (year4 < 0 || year4 > 9999) return undefined;
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `D:${String(year4).padStart(4, '0')}${two(utc.getUTCMonth() + 1)}${two(utc.getUTCDate())}` +
    `${two(utc.getUTCHours())}${two(utc.getUTCMinutes())}${two(utc.getUTCSeconds())}Z`
  );
}

export interface ResultInput {
  /** Text of each page, in page order (index 0 is page 1). */
  pageTexts: string[];
  fileBytes: number;
  /** The Info dictionary's CreationDate as pdf.js reports it (any type; non-strings are ignored). */
  rawCreationDate?: unknown;
}

/** Builds the wire result with the contract's key order: metadata first, then pages. */
export function buildPdfResult({ pageTexts, fileBytes, rawCreationDate }: ResultInput): PdfResult {
  let words = 0;
  let characters = 0;
  for (const text of pageTexts) {
    words += countWords(text);
    characters += countCharacters(text);
  }
  const metadata: PdfMetadata = {
    word_count: words,
    character_count: characters,
    page_count: pageTexts.length,
    file_size: formatFileSize(fileBytes),
  };
  const creationDate = pdfDateToUtc(rawCreationDate);
  if (creationDate !== undefined) metadata.creation_date = creationDate;
  return { metadata, pages: pageTexts.map((text, index) => ({ page: index + 1, text })) };
}
