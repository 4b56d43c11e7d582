/**
 * Text as PostgreSQL can store it: a NUL character (which text columns refuse) becomes U+FFFD. For text
 * that comes from outside and must still be recorded (a destination's answer, what user code logged or
 * threw), where refusing it would lose the record; an unpaired surrogate in it is written as U+FFFD by
 * the driver's UTF-8 encoding. Text a caller sends is refused instead, never altered (unsafeValues in
 * validation.ts).
 */
export const storableText = (text: string) => (text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text);
