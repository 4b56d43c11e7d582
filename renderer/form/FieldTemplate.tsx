// antd's rjsf field template puts a field's ui:help where its errors go: a field with help showed only
// its help, in red, and never said what was wrong, and a field with help lost the space under it that
// a field with a description keeps. Here the help is shown where a description is (below the control,
// the same space under every field), and while the field has errors they take its place (the help
// often says the same rule in other words); it returns once the field is fixed. A description an error
// says in full (the service's "A key is …" over the description "1 to 128 letters …") is left out too.
// And an object with nothing to fill draws nothing (drawsNothing).
import { Templates } from "@rjsf/antd";
import { canExpand, type FieldTemplateProps } from "@rjsf/utils";

const AntdFieldTemplate = Templates.FieldTemplate ?? missingTemplate();

function missingTemplate(): never {
  throw new Error("@rjsf/antd has no FieldTemplate");
}

const sentence = (text: string) => text.trim().toLowerCase().replace(/\.$/, "");

/** Whether one of the field's errors already says its whole description ("A key is 1 to 128 letters…"). */
function errorRepeatsDescription(props: FieldTemplateProps): boolean {
  const description = props.rawDescription ? sentence(props.rawDescription) : "";
  return Boolean(description) && (props.rawErrors ?? []).some((error) => sentence(error).includes(description));
}

/**
 * An object with no fields (yet: they follow a choice not made, as a destination's settings follow the
 * destination) draws nothing, neither a section title nor the empty space of a form item. One that takes
 * names of the user's own (additionalProperties) keeps its button to add one.
 */
const drawsNothing = (props: FieldTemplateProps) =>
  props.schema.type === "object" &&
  Object.keys(props.schema.properties ?? {}).length === 0 &&
  !canExpand(props.schema, props.uiSchema, props.formData);

export function FieldTemplate(props: FieldTemplateProps) {
  if (drawsNothing(props)) return null;
  const shown = errorRepeatsDescription(props)
    ? { ...props, rawDescription: undefined, description: undefined }
    : props;
  if (!props.rawHelp) return <AntdFieldTemplate {...shown} />;
  if (props.rawErrors?.length) return <AntdFieldTemplate {...shown} rawHelp={undefined} help={undefined} />;
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
