/**
 * Half of a UTF-16 surrogate pair on its own (JSON's "\ud800" decodes to one): no character, so UTF-8 and
 * PostgreSQL cannot hold it, and storing it would silently write U+FFFD instead. In `u` mode a whole pair
 * reads as one code point, so only a half alone matches.
 */
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Whether text a caller sends holds an unpaired surrogate: such text is refused, never altered (the
 * argument pre-check, unsafeValues in validation.ts, and the key-value store's checks for filters and
 * functions, kv/limits.ts).
 */
export const hasUnpairedSurrogate = (text: string) => UNPAIRED_SURROGATE.test(text);

/**
 * Text as PostgreSQL can store it: a NUL character (which text columns refuse) becomes U+FFFD. For text
 * that comes from outside and must still be recorded (a destination's answer, what user code logged or
 * threw), where refusing it would lose the record; an unpaired surrogate in it is written as U+FFFD by
 * the driver's UTF-8 encoding.
 */
export const storableText = (text: string) => (text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text);

/**
 * Percent-encoded text decoded, or as it is when its encoding is malformed (`%ZZ`): text from outside
 * (a path, a URL's password, a SAS token), where decodeURIComponent's throw would end whatever read it
 * (the server's request listener, a stream's delivery).
 */
export function decodePercent(text: string): string {
  // Most text has nothing encoded (every RPC path's key and token): no new string, no try.
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
