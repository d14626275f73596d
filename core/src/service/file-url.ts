// Which file-part URLs a message may carry; the service and the transports' schemas share the rule.

/** The schemes a file part's URL may have: a provider reads it, or it carries its own bytes. */
const FILE_URL_SCHEMES = new Set(["https:", "http:", "data:"]);

/**
 * Why a file part's URL is refused, or null. A stored part is converted again on every later
 * model call of its thread, so a URL the SDK cannot use (a `javascript:` or `file:` URL, one it
 * cannot parse, a `data:` URL without data) would fail every later run: it is refused here.
 * The server never fetches the URL either way (the runtime's `download` option, off by default).
 */
export function fileUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute https:, http: or data: URL.";
  }
  if (!FILE_URL_SCHEMES.has(parsed.protocol)) {
    return "must be an https:, http: or data: URL; other schemes are refused.";
  }
  if (parsed.protocol === "data:" && !url.includes(",")) {
    return "is a data: URL without data; use data:<mediaType>;base64,<data>.";
  }
  return null;
}
