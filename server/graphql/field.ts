import type { GraphQLResolveInfo } from "graphql";
import type { EntityInputRef, EntityInputs } from "../../schemas/generated/entities.ts";
import type { Role } from "../platform/roles.ts";
import { assertSafeValues, validateInput } from "../platform/validation.ts";
import { type Context, type Principal, requireRole } from "./context.ts";

/**
 * The one way to write a resolver: `field` checks the caller's role, validates the input against its
 * entity schema and hands the rule the caller's account, so the resolver is the rule and nothing else.
 * Argument and parent types come from the generated `Resolvers` type the map is declared with.
 */

/** What a rule is given: its arguments and parent, the context, and the caller with their account. */
export interface Call<A, P> {
  args: A;
  parent: P;
  ctx: Context;
  principal: Principal;
  /** The account every store call of this field is scoped to. */
  accountId: string;
}

/** The same for a field anyone may call (signing in); the caller is null until signed in. */
export interface PublicCall<A, P> {
  args: A;
  parent: P;
  ctx: Context;
  principal: Principal | null;
}

/** Which entity schema checks a field's input, and which part of the arguments that is. */
export interface InputRule<A, R extends EntityInputRef> {
  schema: R;
  /** The value checked; by default `args.input`. */
  of?: (args: A) => unknown;
}

type FieldResolver<P, A, T> = (parent: P, args: A, ctx: Context, info?: GraphQLResolveInfo) => T;

const inputOf = <A>(args: A) => (args as { input?: unknown }).input;

/**
 * Every argument is checked for values no schema should have to repeat (control characters, unsafe
 * numbers, runaway JSON; see unsafeValues), pointers naming the argument (`/label`, `/input/name`).
 */
function checkedArgs<A>(args: A): A {
  assertSafeValues(args);
  return args;
}

/** `args.input` is checked the same way first, so its pointers are relative to it as the schema's are. */
function checkedInput<A, R extends EntityInputRef>(rule: InputRule<A, R>, args: A): EntityInputs[R] {
  if (!rule.of) assertSafeValues(inputOf(args));
  // An `of` may read the arguments (parse a date, say): they are checked before it runs.
  checkedArgs(args);
  return validateInput(rule.schema, (rule.of ?? inputOf)(args));
}

/**
 * Which schema a resolver checks its input with, readable from the resolver maps, so the generated
 * input proofs (tests/api/proofs) find every field's schema without a table of their own.
 */
const inputRules = new WeakMap<object, InputRule<never, EntityInputRef>>();

export function inputRuleOf(resolver: unknown): InputRule<never, EntityInputRef> | undefined {
  return typeof resolver === "function" ? inputRules.get(resolver) : undefined;
}

function withInputRule<F extends object, A, R extends EntityInputRef>(resolver: F, input: InputRule<A, R>): F {
  // The rule's `of` only reads the arguments it was declared for; the proofs pass those.
  inputRules.set(resolver, input as InputRule<never, EntityInputRef>);
  return resolver;
}

/** A field a signed-in member with at least `role` may call. */
export function field<A, P, T>(role: Role, rule: (call: Call<A, P>) => T): FieldResolver<P, A, T> {
  return (parent, args, ctx) => {
    const principal = requireRole(ctx, role);
    return rule({ args: checkedArgs(args), parent, ctx, principal, accountId: principal.accountId });
  };
}

/** The same, with the input checked first: the rule gets it typed as its schema says. */
export function fieldWithInput<A, P, T, R extends EntityInputRef>(
  role: Role,
  input: InputRule<A, R>,
  rule: (call: Call<A, P> & { input: EntityInputs[R] }) => T,
): FieldResolver<P, A, T> {
  return withInputRule<FieldResolver<P, A, T>, A, R>((parent, args, ctx) => {
    const principal = requireRole(ctx, role);
    return rule({
      args,
      parent,
      ctx,
      principal,
      accountId: principal.accountId,
      input: checkedInput(input, args),
    });
  }, input);
}

/** A field anyone may call (the viewer, signing up, in and out). */
export function publicField<A, P, T>(rule: (call: PublicCall<A, P>) => T): FieldResolver<P, A, T> {
  return (parent, args, ctx) => rule({ args: checkedArgs(args), parent, ctx, principal: ctx.principal });
}

/** The same, with the input checked first. */
export function publicFieldWithInput<A, P, T, R extends EntityInputRef>(
  input: InputRule<A, R>,
  rule: (call: PublicCall<A, P> & { input: EntityInputs[R] }) => T,
): FieldResolver<P, A, T> {
  return withInputRule<FieldResolver<P, A, T>, A, R>(
    (parent, args, ctx) => rule({ args, parent, ctx, principal: ctx.principal, input: checkedInput(input, args) }),
    input,
  );
}

/** The arguments without null values, so optional fields are absent as the JSON Schemas expect. */
export function present<A extends object>(args: A): Partial<A> {
  // Only entries are dropped, so what is left has the arguments' own keys and types.
  return Object.fromEntries(
    Object.entries(args).filter(([, value]) => value !== null && value !== undefined),
  ) as Partial<A>;
}
