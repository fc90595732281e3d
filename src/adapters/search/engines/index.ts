/** The engine adapters by name, and the public base URL each one talks to by default. */
import type { EngineName, SearchEngine } from '../types.ts';
import { bing } from './bing.ts';
import { brave } from './brave.ts';
import { duckduckgo } from './duckduckgo.ts';
import { google } from './google.ts';
import { mojeek } from './mojeek.ts';
import { startpage } from './startpage.ts';

export const ENGINES: Record<EngineName, SearchEngine> = { google, bing, duckduckgo, brave, mojeek, startpage };

export const DEFAULT_BASE_URLS: Record<EngineName, string> = {
  google: 'https://www.google.com',
  bing: 'https://www.bing.com',
  duckduckgo: 'https://html.duckduckgo.com',
  brave: 'https://search.brave.com',
  mojeek: 'https://www.mojeek.com',
  startpage: 'https://www.startpage.com',
};

export function isEngineName(name: string): name is EngineName {
  return Object.hasOwn(ENGINES, name);
}

export { bing, brave, duckduckgo, google, mojeek, startpage };
