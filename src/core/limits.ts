/**
 * Limits on hostile input that more than one layer applies (docs/reliability.md, "Limits on
 * hostile input"). Each is where a careless or hostile caller, page or upstream would otherwise
 * make one request's work grow without bound on the shared event loop.
 */

/**
 * The longest URL accepted anywhere: in a request (a 422 on the field), and among the links a
 * crawl or a map finds (longer ones are dropped). 8 KB is what common servers and proxies take by
 * default (nginx's `large_client_header_buffers`, Apache's `LimitRequestLine`), and far past any
 * URL a real page links to; a longer one cannot be fetched from most sites anyway.
 */
export const MAX_URL_LENGTH = 8192;
