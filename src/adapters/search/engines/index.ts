/**
 * The engine adapters by name: the one list an engine is added to (docs/adding-an-upstream.md).
 * Engine names, SEARCH_ENGINES' vocabulary and the UPSTREAM_<ENGINE>_URL variables derive from it.
 */
import type { SearchEngine } from '../types.ts';
import { bing } from './bing.ts';
import { brave } from './brave.ts';
import { duckduckgo } from './duckduckgo.ts';
import { google } from './google.ts';
import { mojeek } from './mojeek.ts';
import { startpage } from './startpage.ts';

export const ENGINES = { google, bing, duckduckgo, brave, mojeek, startpage } as const satisfies Record<string, SearchEngine>;

export type EngineName = keyof typeof ENGINES;

export const ENGINE_NAMES = Object.keys(ENGINES) as EngineName[];

export function isEngineName(name: string): name is EngineName {
  return Object.hasOwn(ENGINES, name);
}

export { bing, brave, duckduckgo, google, mojeek, startpage };
