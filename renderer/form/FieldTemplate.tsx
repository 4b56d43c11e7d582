// antd's rjsf field template puts a field's ui:help where its errors go, so a field with help showed
// only its help, in red, and never said what was wrong. Here a field's errors take the help's place
// while it has any (the help often says the same rule in other words); the help returns once it is fixed.
import { Templates } from "@rjsf/antd";
import type { FieldTemplateProps } from "@rjsf/utils";

const AntdFieldTemplate = Templates.FieldTemplate ?? missingTemplate();

function missingTemplate(): never {
  throw new Error("@rjsf/antd has no FieldTemplate");
}

export function FieldTemplate(props: FieldTemplateProps) {
  if (!props.rawErrors?.length || !props.rawHelp) return <AntdFieldTemplate {...props} />;
  return <AntdFieldTemplate {...props} rawHelp={undefined} help={undefined} />;
}
