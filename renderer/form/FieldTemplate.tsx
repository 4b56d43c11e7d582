// antd's rjsf field template puts a field's ui:help where its errors go, so a field with help showed
// only a red help text and never said what was wrong. Here the errors keep that place and the help
// moves below them, beside the description.
import { Templates } from "@rjsf/antd";
import type { FieldTemplateProps } from "@rjsf/utils";

const AntdFieldTemplate = Templates.FieldTemplate ?? missingTemplate();

function missingTemplate(): never {
  throw new Error("@rjsf/antd has no FieldTemplate");
}

export function FieldTemplate(props: FieldTemplateProps) {
  if (!props.rawErrors?.length || !props.rawHelp) return <AntdFieldTemplate {...props} />;
  return (
    <AntdFieldTemplate
      {...props}
      rawHelp={undefined}
      help={undefined}
      rawDescription={props.rawDescription || props.rawHelp}
      description={
        <>
          {props.rawDescription ? props.description : null}
          {props.help}
        </>
      }
    />
  );
}
