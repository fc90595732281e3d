/** Building blocks of upstream requests: URLs with parameters, form bodies, cookies. */

export function cookieHeader(cookies: Record<string, string>): string {
  return Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
}
/** `base` + `path` + the defined parameters, in the given order. */
export function buildUrl(base: string, path: string, params: Record<string, string | undefined>): string {
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}
export function formBody(fields: Record<string, string | undefined>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) form.append(name, value);
  }
  return form.toString();
}

/** The path of a URL, or "" when it cannot be parsed (parsers judge redirects by it). */
export function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
