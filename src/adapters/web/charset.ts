/**
 * Bytes of a web page → text, finding the encoding as browsers do (the HTML standard's encoding
 * sniffing, simplified): a byte-order mark is unambiguous and wins; then the charset of the
 * Content-Type header; then a `<meta charset>` / `<meta http-equiv="Content-Type">` or an XML
 * declaration in the first bytes; then UTF-8. Labels are the WHATWG Encoding Standard's, which
 * Node's TextDecoder implements in full (windows-1251, Shift_JIS, GBK, EUC-KR, Big5, UTF-16...),
 * so no transcoding library is needed.
 */
import { declaredCharset } from '../kit/decode.ts';
import { replaceSpans } from '../../core/text.ts';

export interface DecodedText {
  text: string;
  /** The WHATWG name of the encoding used, e.g. "windows-1251". */
  encoding: string;
  /** Where the encoding came from. */
  source: 'bom' | 'header' | 'meta' | 'default';
}

/** How far into the body a `<meta>` declaration is looked for (the standard says 1024; pages often put it later). */
const PRESCAN_BYTES = 4096;

export function decodePage(bytes: Uint8Array, contentType: string | undefined): DecodedText {
  const bom = sniffBom(bytes);
  if (bom !== undefined) return decodeWith(bytes.subarray(bom.length), bom.encoding, 'bom');

  const fromHeader = supportedEncoding(declaredCharset(contentType));
  if (fromHeader !== undefined) return decodeWith(bytes, fromHeader, 'header');

  const fromMeta = supportedEncoding(prescanMeta(bytes));
  // A meta tag read as ASCII cannot truthfully announce UTF-16 (the standard reads it as UTF-8).
  if (fromMeta !== undefined) return decodeWith(bytes, fromMeta.startsWith('utf-16') ? 'utf-8' : fromMeta, 'meta');

  return decodeWith(bytes, 'utf-8', 'default');
}

function decodeWith(bytes: Uint8Array, encoding: string, source: DecodedText['source']): DecodedText {
  // `ignoreBOM` keeps a second BOM in the text: the first one was stripped above when found.
  return { text: new TextDecoder(encoding, { ignoreBOM: source === 'bom' }).decode(bytes), encoding, source };
}

/** The canonical name for a label TextDecoder knows, else undefined ("replacement" is not a real one). */
function supportedEncoding(label: string | undefined): string | undefined {
  if (label === undefined) return undefined;
  try {
    const encoding = new TextDecoder(label.trim()).encoding;
    return encoding === 'replacement' ? undefined : encoding;
  } catch {
    return undefined;
  }
}

function sniffBom(bytes: Uint8Array): { encoding: string; length: number } | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  return undefined;
}

/** The charset a `<meta>` tag or an XML declaration announces in the first bytes, read as ASCII. */
export function prescanMeta(bytes: Uint8Array): string | undefined {
  // Comments out: `.replace(/<!--[\s\S]*?-->/g, '')`.
  const head = replaceSpans(Buffer.from(bytes.subarray(0, PRESCAN_BYTES)).toString('latin1'), /<!--/g, '-->', '');
  const xml = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/i.exec(head);
  if (xml !== null) return xml[1];
  // The tags `/<meta\b[^>]*>/gi` matches: each `<meta` up to the first `>` after it (none has one when the first has not).
  const meta = /<meta\b/gi;
  for (let start = meta.exec(head); start !== null; start = meta.exec(head)) {
    const end = head.indexOf('>', meta.lastIndex);
    if (end === -1) break;
    const charset = /\bcharset\s*=\s*(?:["']\s*)?([^"'\s/>;]+)/i.exec(head.slice(start.index, end + 1));
    if (charset !== null) return charset[1];
    meta.lastIndex = end + 1;
  }
  return undefined;
}
