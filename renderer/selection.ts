// What an operation's selection guarantees about its answer: GraphQL answers every selected field with
// its key (null when it has no value), so a key the answer lacks where the selection does not promise it
// conditionally is a mismatch between a manifest's pointer and its document (faults.tsx). Read from the
// document's text with a small scanner rather than the graphql parser, which stays out of the console's
// download (data.tsx); faults.tsx loads this module only once an answer lacks a key. Pure functions, no React.

/** The keys a selection set answers with; `undefined` marks a leaf (a scalar, `JSON` included: open). */
export interface Selection {
  fields: Map<string, Selection | undefined>;
  /** Keys selected only under a type condition (`... on X`) or `@include`/`@skip`: present or not. */
  conditional: Set<string>;
}

type Token = string;

/** Names, punctuators and strings of an executable document; comments and commas dropped. */
function tokenize(document: string): Token[] {
  const pattern =
    /#[^\n]*|"""[\s\S]*?"""|"(?:\\.|[^"\\])*"|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|-?\d[\w.+-]*|[{}()[\]:=@$!|&]/g;
  return (document.match(pattern) ?? []).filter((token) => !token.startsWith("#"));
}

interface Parsed {
  selectionSet: Node[];
}
type Node =
  | { kind: "field"; key: string; conditional: boolean; children?: Node[] }
  | { kind: "spread"; name: string; conditional: boolean }
  | { kind: "inline"; conditional: boolean; children: Node[] };

class Reader {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}
  peek(): Token | undefined {
    return this.tokens[this.at];
  }
  next(): Token | undefined {
    return this.tokens[this.at++];
  }
  /** Skips a bracketed group (arguments, variable definitions, list values) from its opening token. */
  skipGroup(open: string, close: string) {
    let depth = 0;
    do {
      const token = this.next();
      if (token === open) depth += 1;
      else if (token === close) depth -= 1;
      else if (token === undefined) return;
    } while (depth > 0);
  }
  /** Directives after a field or fragment; whether one of them makes it conditional. */
  directives(): boolean {
    let conditional = false;
    while (this.peek() === "@") {
      this.next();
      const name = this.next();
      if (name === "include" || name === "skip") conditional = true;
      if (this.peek() === "(") this.skipGroup("(", ")");
    }
    return conditional;
  }
  selectionSet(): Node[] {
    const nodes: Node[] = [];
    this.next(); // "{"
    while (this.peek() !== undefined && this.peek() !== "}") {
      if (this.peek() === "...") {
        this.next();
        if (this.peek() === "on" || this.peek() === "@" || this.peek() === "{") {
          let typed = false;
          if (this.peek() === "on") {
            this.next();
            this.next();
            typed = true;
          }
          const conditional = this.directives() || typed;
          nodes.push({ kind: "inline", conditional, children: this.selectionSet() });
        } else {
          const name = this.next() ?? "";
          nodes.push({ kind: "spread", name, conditional: this.directives() });
        }
        continue;
      }
      // An alias is the key the answer uses.
      const key = this.next() ?? "";
      if (this.peek() === ":") {
        this.next();
        this.next();
      }
      if (this.peek() === "(") this.skipGroup("(", ")");
      const conditional = this.directives();
      const children = this.peek() === "{" ? this.selectionSet() : undefined;
      nodes.push({ kind: "field", key, conditional, children });
    }
    this.next(); // "}"
    return nodes;
  }
}

/** The operations and fragments of a document, by name (an anonymous operation under ""). */
function definitions(document: string) {
  const reader = new Reader(tokenize(document));
  const operations = new Map<string, Parsed>();
  const fragments = new Map<string, Parsed>();
  while (reader.peek() !== undefined) {
    if (reader.peek() === "{") {
      operations.set("", { selectionSet: reader.selectionSet() });
      continue;
    }
    const token = reader.next();
    if (token === "fragment") {
      const name = reader.next() ?? "";
      reader.next(); // "on"
      reader.next(); // the type
      reader.directives();
      fragments.set(name, { selectionSet: reader.selectionSet() });
    } else if (token === "query" || token === "mutation" || token === "subscription") {
      const name = reader.peek() === "(" || reader.peek() === "{" || reader.peek() === "@" ? "" : (reader.next() ?? "");
      if (reader.peek() === "(") reader.skipGroup("(", ")");
      reader.directives();
      operations.set(name, { selectionSet: reader.selectionSet() });
    }
  }
  return { operations, fragments };
}

function build(
  nodes: Node[],
  fragments: Map<string, Parsed>,
  into: Selection,
  sure: Set<string>,
  conditional: boolean,
) {
  for (const node of nodes) {
    const underCondition = conditional || node.conditional;
    if (node.kind === "field") {
      if (!underCondition) sure.add(node.key);
      if (node.children) {
        const existing = into.fields.get(node.key);
        const child = existing ?? { fields: new Map(), conditional: new Set<string>() };
        merge(child, node.children, fragments, underCondition);
        into.fields.set(node.key, child);
      } else if (!into.fields.has(node.key)) into.fields.set(node.key, undefined);
    } else if (node.kind === "inline") build(node.children, fragments, into, sure, underCondition);
    else {
      const fragment = fragments.get(node.name);
      if (fragment) build(fragment.selectionSet, fragments, into, sure, underCondition);
    }
  }
}

/**
 * Adds a selection set's keys to `into`, recomputing which of them are conditional. Keys selected inside
 * a conditional field are conditional too: two type conditions may select different keys of one field.
 */
function merge(into: Selection, nodes: Node[], fragments: Map<string, Parsed>, conditional = false) {
  const sure = new Set([...into.fields.keys()].filter((key) => !into.conditional.has(key)));
  build(nodes, fragments, into, sure, conditional);
  into.conditional = new Set([...into.fields.keys()].filter((key) => !sure.has(key)));
}

const selections = new Map<string, Selection | undefined>();

/** The selection operation `name` of `document` answers with, or `undefined` when it has no such operation. */
export function selectionOf(document: string, name: string): Selection | undefined {
  const cacheKey = `${name}\u0000${document}`;
  if (selections.has(cacheKey)) return selections.get(cacheKey);
  const { operations, fragments } = definitions(document);
  const operation = operations.get(name) ?? (operations.size === 1 ? [...operations.values()][0] : undefined);
  let selection: Selection | undefined;
  if (operation) {
    selection = { fields: new Map(), conditional: new Set() };
    merge(selection, operation.selectionSet, fragments);
  }
  selections.set(cacheKey, selection);
  return selection;
}

/** The selection of the values a dotted result path (`things.edges[].node`) reaches; `undefined` past a leaf. */
export function selectionAtPath(selection: Selection | undefined, path: string): Selection | undefined {
  let current = selection;
  for (const raw of path ? path.split(".") : []) {
    const key = raw.endsWith("[]") ? raw.slice(0, -2) : raw;
    if (key) current = current?.fields.get(key);
  }
  return current;
}

/**
 * The first key `keys` names that the answer lacks where the selection does not make it optional, as
 * the keys up to it; `undefined` when every key is there or its absence is legitimate: a null or
 * absent parent, an index past a list's end, a key selected conditionally, or one inside a leaf (`JSON`).
 */
export function unansweredKey(selection: Selection | undefined, value: unknown, keys: string[]): string[] | undefined {
  let current = value;
  let at = selection;
  for (const [index, key] of keys.entries()) {
    if (current === null || current === undefined || !at) return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(key)) return undefined;
      current = current[Number(key)];
      continue;
    }
    if (typeof current !== "object") return undefined;
    if (!(key in current)) return at.conditional.has(key) ? undefined : keys.slice(0, index + 1);
    current = (current as Record<string, unknown>)[key];
    at = at.fields.get(key);
  }
  return undefined;
}
