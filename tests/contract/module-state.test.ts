import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * No mutable state at module level in server/domains: a module is loaded once per process, so what it
 * keeps is shared by every service the process makes (tests start many) and outlives each. A domain's
 * state (caches, counters, queues, limiters) lives in an object made at composition, by its plugin or
 * app.ts, and is handed to what needs it (docs/decisions/0310-domain-state-made-at-composition.md).
 *
 * Refused at the top of a module: a `let` or `var`; a `new Map`, `Set`, `WeakMap`, `WeakSet` or `Array`
 * anywhere in a constant's initializer (outside the functions and classes it defines), unless it is the
 * whole initializer and the constant is typed `ReadonlyMap`, `ReadonlySet` or a readonly array; an array
 * literal not typed readonly, `as const` or frozen; a class's static field that is not readonly or holds
 * one of those collections. Constant tables of other shapes (objects of limits, adapters) are not read
 * here: a module-level object changed at run time is a review's to catch.
 */
const root = path.resolve(import.meta.dirname, "../..");
const domainsDir = path.join(root, "server", "domains");

const COLLECTIONS = new Set(["Map", "Set", "WeakMap", "WeakSet", "Array"]);
const READONLY_TYPES = new Set(["ReadonlyMap", "ReadonlySet", "ReadonlyArray"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** The expression under parentheses, `satisfies` and non-`const` type assertions. */
function unwrap(node: ts.Expression): ts.Expression {
  if (ts.isParenthesizedExpression(node) || ts.isSatisfiesExpression(node)) return unwrap(node.expression);
  if (ts.isAsExpression(node) && !isAsConst(node)) return unwrap(node.expression);
  return node;
}

const isAsConst = (node: ts.Node): boolean =>
  ts.isAsExpression(node) && ts.isTypeReferenceNode(node.type) && node.type.typeName.getText() === "const";

/** A type a collection or array may be declared with to say it is not changed: ReadonlyMap, readonly T[], … */
function isReadonlyType(type: ts.TypeNode | undefined): boolean {
  if (!type) return false;
  if (ts.isTypeOperatorNode(type)) return type.operator === ts.SyntaxKind.ReadonlyKeyword;
  return ts.isTypeReferenceNode(type) && READONLY_TYPES.has(type.typeName.getText());
}

const isFreeze = (node: ts.Expression): node is ts.CallExpression =>
  ts.isCallExpression(node) && node.expression.getText() === "Object.freeze";

/** The collection a `new` makes, when it is one of COLLECTIONS. */
function collectionOf(node: ts.Node): string | null {
  if (!ts.isNewExpression(node) || !ts.isIdentifier(node.expression)) return null;
  return COLLECTIONS.has(node.expression.text) ? node.expression.text : null;
}

/** The collections made in an initializer, not counting those inside the functions and classes it defines. */
function collectionsIn(node: ts.Node): ts.NewExpression[] {
  if (ts.isFunctionLike(node) || ts.isClassLike(node)) return [];
  const made = collectionOf(node) ? [node as ts.NewExpression] : [];
  return [...made, ...node.getChildren().flatMap(collectionsIn)];
}

/** What a constant's initializer keeps that can change, in words; [] for none. */
function mutableInInitializer(declaration: ts.VariableDeclaration | ts.PropertyDeclaration): string[] {
  const initializer = declaration.initializer;
  if (!initializer) return [];
  const whole = unwrap(initializer);
  const readonlyDeclared = isReadonlyType(declaration.type);
  const found: string[] = [];
  for (const made of collectionsIn(initializer)) {
    const kind = collectionOf(made);
    const frozenArray = kind === "Array" && isFreeze(whole) && unwrap(whole.arguments[0]) === made;
    if ((made === whole && readonlyDeclared) || frozenArray) continue;
    found.push(`new ${kind}`);
  }
  const arrayLiteral =
    ts.isArrayLiteralExpression(whole) && !isAsConst(initializer) && !readonlyDeclared && !isFreeze(whole);
  if (arrayLiteral) found.push("an array literal");
  return found;
}

const ADVICE =
  "keep it in an object made at composition (the domain's plugin or app.ts), or type it readonly if it never changes";

/** Each piece of module-level mutable state in a file, as "file:line name: what". */
function moduleState(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const at = (node: ts.Node, name: string, what: string) =>
    `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${name}: ${what}; ${ADVICE}`;
  const problems: string[] = [];
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const declaration of statement.declarationList.declarations) {
        const name = declaration.name.getText();
        if (!constant) problems.push(at(declaration, name, "a module-level let or var"));
        else for (const what of mutableInInitializer(declaration)) problems.push(at(declaration, name, what));
      }
    } else if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const modifiers = ts.getModifiers(member) ?? [];
        if (!modifiers.some((m) => m.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const name = `${statement.name?.text ?? "class"}.${member.name.getText()}`;
        if (!modifiers.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword))
          problems.push(at(member, name, "a static field that is not readonly"));
        for (const what of mutableInInitializer(member)) problems.push(at(member, name, what));
      }
    }
  }
  return problems;
}

describe("module state in server/domains", () => {
  it("is none: every cache, counter and queue is made at composition", () => {
    const problems = sourceFiles(domainsDir).flatMap((file) =>
      moduleState(path.relative(root, file).split(path.sep).join("/"), readFileSync(file, "utf8")),
    );
    expect(problems).toEqual([]);
  });

  it.each([
    ["let count = 0;", "a module-level let or var"],
    ["var seen = 0;", "a module-level let or var"],
    ["const cache = new Map<string, number>();", "new Map"],
    ["export const ids = new Set<string>();", "new Set"],
    ["const views = new WeakMap<object, string>();", "new WeakMap"],
    ["const byRow = { label: new WeakMap<object, string>() };", "new WeakMap"],
    ["const frozen = Object.freeze(new Map());", "new Map"],
    ["const table: ReadonlyMap<string, number> = new Map(entries(new Map()));", "new Map"],
    ["const queue: Waiting[] = [];", "an array literal"],
    ["const buffer = new Array<number>(8);", "new Array"],
    ["class Cache { static hits = 0; }", "a static field that is not readonly"],
    ["class Cache { static readonly entries = new Map(); }", "new Map"],
  ])("finds %s", (code, what) => {
    const [problem, ...more] = moduleState("planted.ts", code);
    expect(problem).toContain(`: ${what};`);
    expect(more).toEqual([]);
  });

  it.each([
    "const byNetwork: ReadonlyMap<string, number> = new Map(pairs);",
    "const names: ReadonlySet<string> = new Set(['a']);",
    "const sizes = [128, 256] as const;",
    "const words: readonly string[] = ['amber'];",
    "const list: ReadonlyArray<string> = [];",
    "const frozen = Object.freeze([1, 2]);",
    "const make = () => new Map<string, number>();",
    "class Model { private readonly rows = new Map<string, number>(); static readonly KIND = 'x'; }",
    "function f() { let n = 0; const m = new Set(); return [n, m]; }",
    "const LIMITS = { perAccount: 8 } as const;",
  ])("allows %s", (code) => {
    expect(moduleState("allowed.ts", code)).toEqual([]);
  });
});
