// Which media types a message part or an upload may declare; the service and the transports'
// schemas share the rule.

// type/subtype, then parameters in printable ASCII: a media type is copied into Content-Type
// headers (a file's download, a provider request), where a control character would throw.
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(;[\x20-\x7e]*)?$/;

/** Why a declared media type is refused, or null. */
export function mediaTypeProblem(value: string): string | null {
  if (value.length > 255) return "must be at most 255 characters.";
  return MEDIA_TYPE.test(value)
    ? null
    : "must look like type/subtype, with any parameters in printable ASCII.";
}
