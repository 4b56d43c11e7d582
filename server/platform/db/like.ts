/** `%text%` for (I)LIKE: the text's own `%`, `_` and `\` match themselves, not any characters. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
