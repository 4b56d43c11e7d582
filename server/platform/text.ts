/**
 * Text as PostgreSQL can store it: a NUL character (which text columns refuse) becomes U+FFFD. For text
 * that comes from outside and must still be recorded (a destination's answer, what user code logged or
 * threw), where refusing it would lose the record.
 */
export const storableText = (text: string) => (text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text);
