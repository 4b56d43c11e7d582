// One value of a row or record, shown by its widget: the manifest's explicit widget, else the
// default the schema predicates choose. Optional link, copy button, field actions and item actions.
// An unknown widget, or a pointer to a key the answer lacks, is a manifest fault (faults.tsx), never
// quietly a plain text or empty cell.
import { CloseOutlined } from "@ant-design/icons";
import { Space } from "antd";
import { Link } from "react-router";
import { Actions, actionState, useActionRunner } from "../actions.tsx";
import { useData } from "../data.tsx";
import { manifestFault, usePointerCheck } from "../faults.tsx";
import { icon } from "../icons.tsx";
import { fillTemplate, getPointer, type Scope } from "../resolve.ts";
import { fieldSchema } from "../schema.ts";
import type { Action, Field, JsonSchema } from "../types.ts";
import { getWidget, pickWidget } from "../widgets/registry.ts";

/** The small per-item buttons (e.g. remove a label): only enabled ones show, so items stay clean. */
function ItemActions({ actions, item, scope }: { actions: Action[]; item: unknown; scope: Scope }) {
  const { viewer } = useData();
  const { run, dialogs } = useActionRunner();
  const itemScope = { ...scope, item };
  const usable = actions.filter((action) => actionState(action, viewer.userRole, item, itemScope).enabled);
  if (!usable.length) return null;
  return (
    <>
      {usable.map((action) => (
        <button
          type="button"
          key={action.id ?? action.label}
          className="np-item-action"
          aria-label={action.label}
          title={action.label}
          onClick={(event) => {
            event.stopPropagation();
            run(action, itemScope);
          }}
        >
          {icon(action.icon) ?? <CloseOutlined />}
        </button>
      ))}
      {dialogs}
    </>
  );
}

export function FieldValue({
  field,
  record,
  entity,
  scope,
}: {
  field: Field;
  record: unknown;
  entity?: JsonSchema;
  scope: Scope;
}) {
  const { registry } = useData();
  const checkPointer = usePointerCheck();
  const schema = fieldSchema(entity, field.field, registry.schemas, record);
  const name = pickWidget(field.widget, schema);
  const Read = getWidget(name)?.read;
  if (!Read) return manifestFault(`Unknown widget '${name}' for the field ${field.field}`);
  const fault = checkPointer(record, field.field, "The field");
  if (fault) return fault;
  const value = getPointer(record, field.field);
  const itemActions = field.itemActions;
  const content = (
    <Read
      value={value}
      schema={schema}
      options={field.options ?? {}}
      record={record}
      copy={field.copy}
      itemExtra={
        itemActions?.length ? (item) => <ItemActions actions={itemActions} item={item} scope={scope} /> : undefined
      }
    />
  );
  const linked = field.link ? (
    <Link to={fillTemplate(field.link, record, true, scope)} onClick={(event) => event.stopPropagation()}>
      {content}
    </Link>
  ) : (
    content
  );
  if (!field.actions?.length) return linked;
  return (
    <Space size={8} wrap>
      {linked}
      <Actions actions={field.actions} subject={record} scope={scope} size="small" />
    </Space>
  );
}
