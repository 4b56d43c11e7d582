// The references a manifest holds into its operations' answers and arguments, each checked against the
// operation's selection set and the SDL's types: `rows`, `record` and other paths, the field pointers of
// columns, details, filters, charts, option lists and predicates, `$row.x`-style references and `{x}`
// placeholders, the variables each view and action passes, and the route parameters `$route.x` reads.
// A name the registry does not know (an operation, an entity) is reported once by the registry itself.
import {
  type GraphQLSchema,
  getNamedType,
  isCompositeType,
  isEnumType,
  Kind,
  type OperationDefinitionNode,
  parse,
  typeFromAST,
  type VariableDefinitionNode,
} from "graphql";
import type {
  Action,
  AlertView,
  ChartView,
  CustomView,
  DetailView,
  Field,
  FormView,
  ListView,
  Manifest,
  OptionsSource,
  Predicate,
  RunnerOptions,
  SuggestionsSource,
  Value,
  Variables,
} from "../../schemas/generated/screen.ts";
import type { EntitySchemas } from "../platform/validation.ts";
import { type AnswerNode, answerOf, followPath, followPointer, followRows, itemOf, type Step } from "./answers.ts";
import { entitySchemaAt } from "./schema-refs.ts";

export interface ReferenceProblem {
  pointer: string;
  reason: string;
}

/** What `$row.x`, `$record.x`, `$item.x` and `$result.x` read where a value is resolved. */
interface Scope {
  row?: AnswerNode;
  record?: AnswerNode;
  item?: AnswerNode;
  result?: AnswerNode;
}

interface OperationInfo {
  answer: AnswerNode;
  variables: Map<string, VariableDefinitionNode>;
}

const REFERENCE = /^\$(route|query|row|record|form|viewer|item|result)(?:\.(.+))?$/;
const PLACEHOLDER = /\{([^{}]+)\}/g;
const pointerEscape = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

export function manifestReferenceProblems(
  manifest: Manifest,
  apiSchema: GraphQLSchema,
  operations: ReadonlyMap<string, { text: string }>,
  entities: { schemas: EntitySchemas; known: (name: string) => boolean },
): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const report = (pointer: string, reason: string) => problems.push({ pointer, reason });
  const routeParams = new Set([...manifest.route.matchAll(/:([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]));
  const infos = new Map<string, OperationInfo | null>();

  function operation(name: string | undefined): OperationInfo | null {
    if (!name) return null;
    if (!infos.has(name)) {
      const text = operations.get(name)?.text;
      const answer = text ? answerOf(apiSchema, text) : null;
      const definition = text
        ? parse(text).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
        : undefined;
      const variables = new Map(definition?.variableDefinitions?.map((v) => [v.variable.name.value, v]) ?? []);
      infos.set(name, answer ? { answer, variables } : null);
    }
    return infos.get(name) ?? null;
  }

  /** A node a path or pointer led to, or a report of why it led nowhere. */
  function reached(step: Step, at: string, what: string): AnswerNode | undefined {
    if ("node" in step) return step.node;
    report(at, `${what}: ${step.reason}`);
    return undefined;
  }

  function pointerInto(node: AnswerNode | undefined, pointer: string | undefined, at: string, what: string) {
    if (!node || pointer === undefined) return undefined;
    return reached(followPointer(node, pointer), at, `${pointer} is not in ${what}`);
  }

  function variableNamed(opName: string, info: OperationInfo, name: string | undefined, at: string) {
    if (name === undefined || info.variables.has(name)) return;
    const declared = [...info.variables.keys()].map((v) => `$${v}`).join(", ") || "none";
    report(at, `${opName} declares no variable $${name} (it declares ${declared})`);
  }

  /** A `$scope.path` reference, or every one inside an object or array. */
  function value(v: Value | undefined, at: string, scope: Scope) {
    if (Array.isArray(v)) {
      for (const [i, entry] of v.entries()) value(entry, `${at}/${i}`, scope);
      return;
    }
    if (v && typeof v === "object") {
      for (const [key, entry] of Object.entries(v)) value(entry, `${at}/${pointerEscape(key)}`, scope);
      return;
    }
    if (typeof v !== "string") return;
    const match = REFERENCE.exec(v);
    if (!match) return;
    const [, scopeName, path] = match;
    if (scopeName === "route") {
      if (path && !routeParams.has(path.split(".")[0]))
        report(at, `${v} reads the route parameter :${path}, which the route ${manifest.route} does not have`);
      return;
    }
    const node = scope[scopeName as keyof Scope];
    if (node && path) reached(followPath(node, path), at, `${v} reads nothing`);
  }

  /** The variables a view or action passes to an operation: each declared by it, and its references. */
  function variables(
    opName: string | undefined,
    given: Variables | undefined,
    at: string,
    scope: Scope,
    required: boolean,
  ) {
    for (const [name, v] of Object.entries(given ?? {})) value(v, `${at}/variables/${pointerEscape(name)}`, scope);
    const info = operation(opName);
    if (!info || !opName) return;
    for (const name of Object.keys(given ?? {}))
      variableNamed(opName, info, name, `${at}/variables/${pointerEscape(name)}`);
    if (!required) return;
    for (const [name, definition] of info.variables) {
      if (definition.type.kind === Kind.NON_NULL_TYPE && !definition.defaultValue && !(name in (given ?? {})))
        report(at, `${opName} needs the variable $${name}, which is not passed`);
    }
  }

  function template(text: string | undefined, node: AnswerNode | undefined, at: string, scope: Scope) {
    for (const [, raw] of text?.matchAll(PLACEHOLDER) ?? []) {
      const path = raw.trim();
      if (REFERENCE.test(path)) value(path, at, scope);
      else if (node) reached(followPath(node, path), at, `{${path}} reads nothing`);
    }
  }

  function predicate(p: Predicate | undefined, subject: AnswerNode | undefined, at: string, scope: Scope) {
    if (!p) return;
    if ("not" in p) predicate(p.not, subject, `${at}/not`, scope);
    else if ("all" in p) for (const [i, entry] of p.all.entries()) predicate(entry, subject, `${at}/all/${i}`, scope);
    else if ("any" in p) for (const [i, entry] of p.any.entries()) predicate(entry, subject, `${at}/any/${i}`, scope);
    else {
      pointerInto(subject, p.field, `${at}/field`, "what the condition reads");
      value(p.eq, `${at}/eq`, scope);
      value(p.neq, `${at}/neq`, scope);
      for (const [i, entry] of (p.in ?? []).entries()) value(entry, `${at}/in/${i}`, scope);
    }
  }

  function action(a: Action, at: string, subject: AnswerNode | undefined, scope: Scope) {
    predicate(a.visibleWhen, subject, `${at}/visibleWhen`, scope);
    predicate(a.disabledWhen, subject, `${at}/disabledWhen`, scope);
    if (!a.mutation) template(a.to, subject, `${at}/to`, scope);
    template(a.confirm?.description, subject, `${at}/confirm/description`, scope);
    value(a.form?.initial, `${at}/form/initial`, scope);
    variables(a.mutation, a.variables, at, scope, true);
    const result = operation(a.mutation)?.answer;
    if (a.showResult) pointerInto(result, a.showResult.field, `${at}/showResult/field`, `the answer of ${a.mutation}`);
  }

  function actions(list: Action[] | undefined, at: string, subject: AnswerNode | undefined, scope: Scope) {
    for (const [i, a] of (list ?? []).entries()) action(a, `${at}/${i}`, subject, scope);
  }

  function field(f: Field, at: string, subject: AnswerNode | undefined, scope: Scope, what: string) {
    const node = pointerInto(subject, f.field, `${at}/field`, what);
    template(f.link, subject, `${at}/link`, scope);
    const reason = f.options?.reason;
    if (typeof reason === "string") pointerInto(subject, reason, `${at}/options/reason`, what);
    const text = f.options?.text;
    if (typeof text === "string") template(text, subject, `${at}/options/text`, scope);
    predicate(f.visibleWhen, subject, `${at}/visibleWhen`, scope);
    actions(f.actions, `${at}/actions`, subject, scope);
    const item = node ? itemOf(node) : undefined;
    actions(f.itemActions, `${at}/itemActions`, item, { ...scope, item });
  }

  function optionsSource(source: OptionsSource, at: string, scope: Scope) {
    variables(source.query, source.variables, at, scope, false);
    const answer = operation(source.query)?.answer;
    const row = answer
      ? reached(followRows(answer, source.rows), `${at}/rows`, `${source.rows} holds no rows`)
      : undefined;
    const what = `a row of ${source.query}`;
    pointerInto(row, source.value, `${at}/value`, what);
    // On a list of plain values (memory sizes) the label is the value: the renderer falls back to it,
    // and the label stays a non-empty string because rjsf reads `ui:options.label: ""` as "hide the title".
    if (!row || isCompositeType(getNamedType(row.type))) pointerInto(row, source.label, `${at}/label`, what);
    pointerInto(row, source.detail, `${at}/detail`, what);
    predicate(source.where, row, `${at}/where`, scope);
    predicate(source.disabledWhen, row, `${at}/disabledWhen`, scope);
    for (const [i, badge] of (source.badges ?? []).entries())
      predicate(badge.when, row, `${at}/badges/${i}/when`, scope);
  }

  /** A text-suggestions control's rows (as an options source's) and the mutation that makes a new one. */
  function suggestionsSource(source: SuggestionsSource, at: string, scope: Scope) {
    optionsSource(source, at, scope);
    const create = source.create;
    if (!create) return;
    variables(create.mutation, create.variables, `${at}/create`, scope, true);
    const answer = operation(create.mutation)?.answer;
    if (answer) reached(followPath(answer, create.value), `${at}/create/value`, `${create.value} reads nothing`);
  }

  /** The option lists of `remote-options` and `text-suggestions` controls, at any depth of a uiSchema. */
  function uiSchema(ui: unknown, at: string, scope: Scope) {
    if (!ui || typeof ui !== "object") return;
    const node = ui as Record<string, unknown>;
    const options = node["ui:options"] as OptionsSource | undefined;
    if (node["ui:widget"] === "remote-options" && options?.query) optionsSource(options, `${at}/ui:options`, scope);
    if (node["ui:widget"] === "text-suggestions" && options?.query)
      suggestionsSource(options as SuggestionsSource, `${at}/ui:options`, scope);
    for (const [key, child] of Object.entries(node))
      if (!key.startsWith("ui:")) uiSchema(child, `${at}/${pointerEscape(key)}`, scope);
  }

  function entity(name: string | undefined, at: string) {
    if (name !== undefined && !entities.known(name))
      report(at, `names the entity ${name}, which schemas/entities does not define`);
  }

  function enumValue(opName: string, info: OperationInfo, variable: string, v: string | undefined, at: string) {
    const definition = info.variables.get(variable);
    if (!definition || v === undefined) return;
    const type = typeFromAST(apiSchema, definition.type as never);
    const named = type ? getNamedType(type) : undefined;
    if (isEnumType(named) && !named.getValue(v))
      report(at, `${v} is not a value of ${named.name}, the type of $${variable} in ${opName}`);
  }

  function list(view: ListView, at: string) {
    entity(view.entity, `${at}/entity`);
    variables(view.query, view.variables, at, {}, false);
    const info = operation(view.query);
    const row = info
      ? reached(followRows(info.answer, view.rows), `${at}/rows`, `${view.rows} holds no rows`)
      : undefined;
    const what = `a row of ${view.query}`;
    pointerInto(row, view.rowKey, `${at}/rowKey`, what);
    if (info) {
      const declared = (name: string | undefined, where: string) => variableNamed(view.query, info, name, where);
      const path = (p: string | undefined, where: string) => {
        if (p !== undefined) reached(followPath(info.answer, p), where, `${p} reads nothing`);
      };
      const paging = view.paging;
      if (paging && paging.mode === "token") {
        declared(paging.size, `${at}/paging/size`);
        declared(paging.token, `${at}/paging/token`);
        path(paging.next, `${at}/paging/next`);
      } else if (paging) {
        declared(paging.first, `${at}/paging/first`);
        declared(paging.after, `${at}/paging/after`);
        path(paging.endCursor, `${at}/paging/endCursor`);
        path(paging.hasNextPage, `${at}/paging/hasNextPage`);
      }
      path(paging?.total, `${at}/paging/total`);
      declared(view.search?.variable, `${at}/search/variable`);
      declared(view.sort?.variable, `${at}/sort/variable`);
      declared(view.timeRange?.from, `${at}/timeRange/from`);
      declared(view.timeRange?.to, `${at}/timeRange/to`);
      if (view.sort) {
        enumValue(view.query, info, view.sort.variable, view.sort.default, `${at}/sort/default`);
        for (const [i, column] of view.columns.entries())
          enumValue(view.query, info, view.sort.variable, column.sortable, `${at}/columns/${i}/sortable`);
      }
      for (const [i, filter] of (view.filters ?? []).entries())
        declared(filter.variable, `${at}/filters/${i}/variable`);
    }
    for (const [i, filter] of (view.filters ?? []).entries()) {
      // A filter's field names where its choices are in the entity schema, not in the answer.
      if (filter.field !== undefined && !view.entity)
        report(`${at}/filters/${i}/field`, "names a field of the entity schema, but the view names no entity");
      else if (filter.field !== undefined && view.entity && entities.schemas[view.entity]) {
        if (!entitySchemaAt(entities.schemas, view.entity, filter.field))
          report(`${at}/filters/${i}/field`, `${filter.field} is not in the entity schema ${view.entity}`);
      }
      if (filter.options && !Array.isArray(filter.options))
        optionsSource(filter.options, `${at}/filters/${i}/options`, {});
    }
    const rowScope = { row };
    for (const [i, column] of view.columns.entries()) field(column, `${at}/columns/${i}`, row, rowScope, what);
    template(view.rowLink, row, `${at}/rowLink`, rowScope);
    actions(view.rowActions, `${at}/rowActions`, row, rowScope);
    actions(view.bulkActions, `${at}/bulkActions`, row, rowScope);
    actions(view.toolbar, `${at}/toolbar`, undefined, {});
    if (view.notice) {
      predicate(view.notice.when, info?.answer, `${at}/notice/when`, {});
      actions(view.notice.actions, `${at}/notice/actions`, undefined, {});
    }
  }

  function detail(view: DetailView, at: string) {
    entity(view.entity, `${at}/entity`);
    variables(view.query, view.variables, at, {}, false);
    const answer = operation(view.query)?.answer;
    const record = answer
      ? reached(followPath(answer, view.record), `${at}/record`, `${view.record} reads nothing`)
      : undefined;
    const scope = { record };
    template(view.title, record, `${at}/title`, scope);
    for (const [s, section] of view.sections.entries())
      for (const [i, f] of section.fields.entries())
        field(f, `${at}/sections/${s}/fields/${i}`, record, scope, `the record of ${view.query}`);
    actions(view.actions, `${at}/actions`, record, scope);
  }

  function form(view: FormView, at: string) {
    variables(view.mutation, view.variables, at, {}, false);
    uiSchema(view.uiSchema, `${at}/uiSchema`, {});
    if (view.initial) {
      variables(view.initial.query, view.initial.variables, `${at}/initial`, {}, false);
      const answer = operation(view.initial.query)?.answer;
      if (answer)
        reached(
          followPath(answer, view.initial.record),
          `${at}/initial/record`,
          `${view.initial.record} reads nothing`,
        );
    }
    const result = operation(view.mutation)?.answer;
    if (result && view.submit?.result)
      reached(
        followPath(result, view.submit.result.record),
        `${at}/submit/result/record`,
        `${view.submit.result.record} reads nothing`,
      );
    if (result) template(view.submit?.redirect, result, `${at}/submit/redirect`, {});
  }

  function chart(view: ChartView, at: string) {
    variables(view.query, view.variables, at, {}, false);
    const answer = operation(view.query)?.answer;
    if (!answer) return;
    for (const [i, series] of view.series.entries()) {
      const row = reached(followRows(answer, series.rows), `${at}/series/${i}/rows`, `${series.rows} holds no rows`);
      const what = `a row of ${series.rows}`;
      pointerInto(row, series.encode.x, `${at}/series/${i}/encode/x`, what);
      pointerInto(row, series.encode.y, `${at}/series/${i}/encode/y`, what);
      pointerInto(row, series.encode.series, `${at}/series/${i}/encode/series`, what);
    }
    for (const key of ["from", "to", "stepSeconds"] as const)
      if (view.timeAxis)
        reached(followPath(answer, view.timeAxis[key]), `${at}/timeAxis/${key}`, `${view.timeAxis[key]} reads nothing`);
  }

  function custom(view: CustomView, at: string) {
    variables(view.query, view.variables, at, {}, false);
    const answer = operation(view.query)?.answer;
    if (answer && view.record !== undefined)
      reached(followPath(answer, view.record), `${at}/record`, `${view.record} reads nothing`);
    if (view.widget !== "runner") return;
    const runner = view.options as unknown as RunnerOptions;
    const opName = runner.query ?? runner.mutation;
    variables(opName, runner.variables ?? { input: "$form" }, `${at}/options`, {}, false);
    uiSchema(runner.uiSchema, `${at}/options/uiSchema`, {});
    const result = operation(opName)?.answer;
    for (const [i, output] of (runner.outputs ?? []).entries())
      if (result)
        reached(followPath(result, output.path), `${at}/options/outputs/${i}/path`, `${output.path} reads nothing`);
    if (runner.save) variables(runner.save.mutation, runner.save.variables, `${at}/options/save`, {}, false);
  }

  function alert(view: AlertView, at: string) {
    variables(view.query, view.variables, at, {}, false);
    const answer = operation(view.query)?.answer;
    const row = answer ? reached(followRows(answer, view.rows), `${at}/rows`, `${view.rows} holds no rows`) : undefined;
    const scope = { row };
    template(view.item.text, row, `${at}/item/text`, scope);
    template(view.item.detail, row, `${at}/item/detail`, scope);
    template(view.item.link, row, `${at}/item/link`, scope);
  }

  for (const [i, view] of manifest.views.entries()) {
    const at = `/views/${i}`;
    if (view.kind === "list") list(view, at);
    else if (view.kind === "detail") detail(view, at);
    else if (view.kind === "form") form(view, at);
    else if (view.kind === "chart") chart(view, at);
    else if (view.kind === "custom") custom(view, at);
    else alert(view, at);
  }
  return problems;
}
