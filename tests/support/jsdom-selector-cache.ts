/**
 * A setup file of the unit-dom project (jsdom): jsdom's selector engine (nwsapi) keeps at most 1,000 compiled selectors
 * per document, least recently used first out. jsdom's getComputedStyle matches every rule of the page's
 * style sheets against the element, and antd's injected CSS holds more selectors than that, so each
 * call recompiled every one of them: 60% of a renderer file's CPU went to compiling selectors
 * (getByRole asks for the computed style of every node it names; antd's form items and popups ask too).
 * The same caches without the bound: what is matched, and how, is unchanged.
 */
import { createRequire } from "node:module";

interface SelectorCache {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  has(key: string): boolean;
  clear(): void;
}

/** The parts of an nwsapi instance made for a document that are changed here. */
type SelectorEngine = Record<"matchLambdas" | "selectLambdas" | "matchResolvers" | "selectResolvers", SelectorCache>;

function withoutBound(cache: SelectorCache): void {
  const entries = new Map<string, unknown>();
  cache.get = (key) => entries.get(key);
  cache.set = (key, value) => void entries.set(key, value);
  cache.has = (key) => entries.has(key);
  cache.clear = () => entries.clear();
}

// jsdom's own module (Node's require cache), so its symbol finds the document's implementation object.
const { implForWrapper } = createRequire(import.meta.url)("jsdom/lib/jsdom/living/generated/utils.js") as {
  implForWrapper(wrapper: object): Record<string, unknown>;
};
const documentImpl = implForWrapper(document);
// jsdom makes its two engines on first use (one for matches() and queries, one that does not throw,
// for style sheets): each is changed as it is made.
for (const slot of ["_nwsapi", "_nwsapiDontThrow"]) {
  let engine: SelectorEngine | undefined;
  Object.defineProperty(documentImpl, slot, {
    configurable: true,
    get: () => engine,
    set: (made: SelectorEngine) => {
      for (const name of ["matchLambdas", "selectLambdas", "matchResolvers", "selectResolvers"] as const)
        withoutBound(made[name]);
      engine = made;
    },
  });
}
