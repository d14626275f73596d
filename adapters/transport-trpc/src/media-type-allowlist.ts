import { PaiError } from "@pai/core";

/**
 * Checks uploaded media types against a list of accepted ones. Entries are exact types
 * (`text/csv`) or a whole top-level type (`image/*`); parameters such as `; charset=utf-8` and
 * letter case are ignored on both sides, so `Text/CSV; charset=utf-8` matches `text/csv`.
 */
export type MediaTypeAllowlist = {
  /** Throws `PaiError` INVALID_INPUT naming the accepted types when `mediaType` is not one of them. */
  check(mediaType: string): void;
};

function essence(mediaType: string): string {
  return mediaType.split(";", 1)[0].trim().toLowerCase();
}

/** Builds the check for `allowed`; `undefined` accepts every media type. */
export function createMediaTypeAllowlist(allowed: readonly string[] | undefined): MediaTypeAllowlist {
  if (allowed === undefined) return { check: () => {} };
  const entries = allowed.map(essence);
  for (const entry of entries) {
    if (!/^[\w.+-]+\/([\w.+-]+|\*)$/.test(entry)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `files.allowedMediaTypes has "${entry}", which is not a media type. Use "type/subtype" or "type/*", e.g. "text/csv" or "image/*".`,
      );
    }
  }
  const exact = new Set(entries.filter((entry) => !entry.endsWith("/*")));
  const wildcards = entries.filter((entry) => entry.endsWith("/*")).map((entry) => entry.slice(0, -1));
  const listed = allowed.length > 0 ? allowed.join(", ") : "none (uploads are disabled)";
  return {
    check(mediaType) {
      const candidate = essence(mediaType);
      if (exact.has(candidate) || wildcards.some((prefix) => candidate.startsWith(prefix))) return;
      const message = `Media type "${mediaType}" is not accepted for uploads. Allowed types: ${listed}.`;
      throw new PaiError("INVALID_INPUT", message, { issues: [{ message, path: ["mediaType"] }] });
    },
  };
}
