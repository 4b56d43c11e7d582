/**
 * How deeply brackets (`{`, `[`, `(`) nest in a GraphQL text, outside strings and comments, read in one
 * pass without parsing. graphql-js parses nested values and selections recursively, and before V8 has
 * optimised its parser a few thousand levels overflow the stack (a RangeError, not a GraphQL error): the
 * API refuses such a text before it is parsed. Stops counting once past `limit`.
 */
export function bracketNesting(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x23 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22 /* " */) {
      if (text.startsWith('"""', i)) {
        const end = blockStringEnd(text, i + 3);
        if (end < 0) return deepest;
        i = end + 2;
      } else {
        i++;
        while (i < text.length && text.charCodeAt(i) !== 0x22 && text.charCodeAt(i) !== 0x0a) {
          if (text.charCodeAt(i) === 0x5c /* \ */) i++;
          i++;
        }
      }
    } else if (c === 0x7b || c === 0x5b || c === 0x28) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      depth--;
    }
  }
  return deepest;
}

/** Where the block string's closing `"""` starts (an escaped `\"""` does not close it), or -1. */
function blockStringEnd(text: string, from: number): number {
  let at = text.indexOf('"""', from);
  while (at > 0 && text.charCodeAt(at - 1) === 0x5c) at = text.indexOf('"""', at + 3);
  return at;
}
