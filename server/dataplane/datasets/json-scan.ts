/**
 * Cuts a JSON-RPC batch answer into its responses without building their results: each response's
 * `id` and the source text of its `result` or `error`. The stream engine delivers a block as the node
 * wrote it, so it never needs the block as objects (parsing and writing it back cost it more than
 * anything else on small blocks). The answer must be valid JSON (the node's); what this cannot cut is
 * refused with a JsonScanError, and the caller parses it to say why.
 */

export interface ScannedResponse {
  /** The id's source text (`7`, `"7"`, `null`). */
  id: string;
  /** Source text of the result, or undefined when the response has none. */
  result?: string;
  /** Source text of the error object, or undefined. */
  error?: string;
}

export class JsonScanError extends Error {
  constructor(message: string, at: number) {
    super(`${message} at character ${at}`);
    this.name = "JsonScanError";
  }
}

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpace(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string whose opening quote is at `i`. */
function skipString(text: string, i: number): number {
  let end = text.indexOf('"', i + 1);
  while (end !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end + 1;
    end = text.indexOf('"', end + 1);
  }
  throw new JsonScanError("unterminated string", i);
}

/** The index after the object or array opening at `i`. Strings are jumped over with indexOf. */
function skipComposite(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) j = skipString(text, j) - 1;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return j + 1;
  }
  throw new JsonScanError("unterminated object or array", i);
}

/** The index after the value starting at `i` (no leading space). */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return skipComposite(text, i);
  if (c === QUOTE) return skipString(text, i);
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    j++;
  }
  if (j === i) throw new JsonScanError("value expected", i);
  return j;
}

function expect(text: string, i: number, code: number): number {
  if (text.charCodeAt(i) !== code) throw new JsonScanError(`'${String.fromCharCode(code)}' expected`, i);
  return skipSpace(text, i + 1);
}

/** One response object starting at `i`; returns it and the index after it. */
function scanResponse(text: string, start: number): [ScannedResponse, number] {
  const response: ScannedResponse = { id: "null" };
  let i = expect(text, start, OPEN_BRACE);
  if (text.charCodeAt(i) === CLOSE_BRACE) return [response, i + 1];
  while (true) {
    if (text.charCodeAt(i) !== QUOTE) throw new JsonScanError("member name expected", i);
    const keyEnd = skipString(text, i);
    const key = text.slice(i + 1, keyEnd - 1);
    i = expect(text, skipSpace(text, keyEnd), COLON);
    const valueEnd = skipValue(text, i);
    if (key === "id") response.id = text.slice(i, valueEnd);
    else if (key === "result") response.result = text.slice(i, valueEnd);
    else if (key === "error") response.error = text.slice(i, valueEnd);
    i = skipSpace(text, valueEnd);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return [response, i + 1];
    i = expect(text, i, COMMA);
  }
}

/** The responses of a batch answer (a JSON array of response objects), in the order the node sent them. */
export function scanBatchAnswer(text: string): ScannedResponse[] {
  const responses: ScannedResponse[] = [];
  let i = expect(text, skipSpace(text, 0), OPEN_BRACKET);
  if (text.charCodeAt(i) === CLOSE_BRACKET) i = skipSpace(text, i + 1);
  else {
    while (true) {
      const [response, end] = scanResponse(text, i);
      responses.push(response);
      i = skipSpace(text, end);
      if (text.charCodeAt(i) === CLOSE_BRACKET) {
        i = skipSpace(text, i + 1);
        break;
      }
      i = expect(text, i, COMMA);
    }
  }
  if (i !== text.length) throw new JsonScanError("unexpected text after the answer", i);
  return responses;
}
