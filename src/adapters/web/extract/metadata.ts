/**
 * The page's metadata, as Firecrawl-style clients expect it: from `<meta>` tags (OpenGraph,
 * Twitter, Dublin Core, `article:*`), `<link rel=canonical>`, `<html lang>` and schema.org JSON-LD.
 * Every key is present; an unknown value is `null`.
 */
import { BLOCK_TAG, elementsByTagNames, type DomDocument } from './dom.ts';

export interface PageMetadata {
  title: string | null;
  description: string | null;
  language: string | null;
  author: string | null;
  published_at: string | null;
  site_name: string | null;
  canonical_url: string | null;
  image: string | null;
}

export const METADATA_KEYS = ['title', 'description', 'language', 'author', 'published_at', 'site_name', 'canonical_url', 'image'] as const;

type JsonObject = Record<string, unknown>;

/** The JSON-LD objects of the page, `@graph` members included, in page order. Malformed blocks are skipped. */
export function jsonLdObjects(document: DomDocument): JsonObject[] {
  const objects: JsonObject[] = [];
  const visit = (value: unknown, depth: number) => {
    if (depth > 4 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    const object = value as JsonObject;
    objects.push(object);
    if (object['@graph'] !== undefined) visit(object['@graph'], depth + 1);
  };
  // Walks by tag name: linkedom compiles a selector into a matcher on every `querySelectorAll`.
  for (const script of elementsByTagNames(document, ['script'])) {
    if (script.getAttribute('type')?.toLowerCase() !== 'application/ld+json') continue;
    try {
      visit(JSON.parse(script.textContent ?? ''), 0);
    } catch {
      // A page's broken JSON-LD says nothing; the meta tags still do.
    }
  }
  return objects;
}

const ARTICLE_TYPES = /article|posting|report|blog|news|review|recipe|howto|webpage|qapage|discussion/i;

function types(object: JsonObject): string {
  const type = object['@type'];
  return Array.isArray(type) ? type.join(' ') : typeof type === 'string' ? type : '';
}

/** The JSON-LD object that describes the page's main content: an article type first, then any with a headline. */
export function mainJsonLd(objects: readonly JsonObject[]): JsonObject | undefined {
  return objects.find((object) => ARTICLE_TYPES.test(types(object)) && (object.headline !== undefined || object.articleBody !== undefined)) ?? objects.find((object) => ARTICLE_TYPES.test(types(object)));
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]);
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A HowTo's or a Recipe's text from its JSON-LD, as HTML: its description, ingredients and steps
 * (section names before their steps), a paragraph each. Pages that render their steps with
 * scripts have them only there. Plain text is escaped; a value written as HTML (some
 * publishers do) is kept as markup.
 */
export function stepsHtml(object: JsonObject | undefined): string | undefined {
  if (object === undefined || !/howto|recipe/i.test(types(object))) return undefined;
  const blocks: string[] = [];
  const add = (value: unknown) => {
    if (typeof value !== 'string' || value.trim() === '') return;
    const trimmed = value.trim();
    blocks.push(BLOCK_TAG.test(trimmed) ? trimmed : `<p>${escapeHtml(trimmed)}</p>`);
  };
  add(object.description);
  for (const ingredient of asArray(object.recipeIngredient)) add(ingredient);
  const steps = (value: unknown, depth: number) => {
    if (depth > 4) return;
    for (const item of asArray(value)) {
      if (typeof item === 'string') add(item);
      else if (item !== null && typeof item === 'object') {
        const step = item as JsonObject;
        if (step.itemListElement !== undefined) {
          add(step.name); // a HowToSection
          steps(step.itemListElement, depth + 1);
        } else add(step.text ?? step.name);
      }
    }
  };
  steps(object.step ?? object.recipeInstructions, 0);
  return blocks.length > 0 ? blocks.join('\n') : undefined;
}

function text(value: unknown): string | null {
  if (typeof value === 'string') {
    const trimmed = value.replace(/\s+/g, ' ').trim();
    return trimmed === '' ? null : trimmed;
  }
  if (typeof value === 'number') return String(value);
  return null;
}

/** A name from a JSON-LD person or organisation, a list of them, or a string. */
function names(value: unknown): string | null {
  if (Array.isArray(value)) {
    const all = value.map(names).filter((name): name is string => name !== null);
    return all.length > 0 ? [...new Set(all)].join(', ') : null;
  }
  if (value !== null && typeof value === 'object') return text((value as JsonObject).name);
  return text(value);
}

/** A URL from a JSON-LD image (string, ImageObject, or a list of either). */
function imageUrl(value: unknown): string | null {
  if (Array.isArray(value)) return value.length > 0 ? imageUrl(value[0]) : null;
  if (value !== null && typeof value === 'object') return text((value as JsonObject).url) ?? text((value as JsonObject).contentUrl);
  return text(value);
}

function absolute(value: string | null, base: string): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

export function readMetadata(document: DomDocument, pageUrl: string, objects: readonly JsonObject[] = jsonLdObjects(document)): PageMetadata {
  const meta = new Map<string, string>();
  for (const element of elementsByTagNames(document, ['meta'])) {
    if (!element.hasAttribute('content')) continue;
    const key = (element.getAttribute('property') ?? element.getAttribute('name') ?? element.getAttribute('itemprop') ?? element.getAttribute('http-equiv') ?? '').trim().toLowerCase();
    const value = text(element.getAttribute('content'));
    if (key !== '' && value !== null && !meta.has(key)) meta.set(key, value);
  }
  const first = (...keys: string[]) => {
    for (const key of keys) {
      const value = meta.get(key);
      if (value !== undefined) return value;
    }
    return null;
  };
  const ld = mainJsonLd(objects) ?? {};
  const website = objects.find((object) => /website|organization/i.test(types(object)));
  const publisher = ld.publisher as JsonObject | undefined;
  const notUrl = (value: string | null) => (value !== null && !/^https?:\/\//i.test(value) ? value : null);

  const titleElement = document.querySelector('title');
  const title = text(titleElement?.textContent) ?? first('og:title', 'twitter:title', 'dc.title') ?? text(ld.headline) ?? text(document.querySelector('h1')?.textContent);
  const language = text(document.documentElement.getAttribute('lang')) ?? first('content-language', 'dc.language', 'language') ?? text(ld.inLanguage) ?? (first('og:locale')?.replace('_', '-') ?? null);
  return {
    title,
    description: first('description', 'og:description', 'twitter:description', 'dc.description') ?? text(ld.description),
    language,
    author: notUrl(first('author', 'article:author', 'dc.creator', 'parsely-author', 'sailthru.author')) ?? names(ld.author) ?? names(ld.creator),
    published_at: first('article:published_time', 'og:published_time', 'datepublished', 'date', 'dc.date', 'dc.date.issued', 'pubdate', 'publishdate', 'sailthru.date', 'parsely-pub-date') ?? text(ld.datePublished) ?? text(document.querySelector('time[datetime]')?.getAttribute('datetime')),
    site_name: first('og:site_name', 'application-name') ?? names(publisher) ?? (website ? names(website) : null),
    canonical_url: absolute(text(document.querySelector('link[rel~="canonical" i][href]')?.getAttribute('href')), pageUrl) ?? absolute(first('og:url'), pageUrl),
    image: absolute(first('og:image', 'og:image:url', 'og:image:secure_url', 'twitter:image', 'twitter:image:src') ?? imageUrl(ld.image) ?? imageUrl(ld.thumbnailUrl), pageUrl),
  };
}
