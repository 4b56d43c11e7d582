// Every custom widget the manifests may name; importing this registers them.
import "./code-sample.tsx";
import "./stream-filter-tester.tsx";
import "./stream-icons.tsx";
import "./stream-raw-payload.tsx";
import "./stream-start-block.tsx";
import "./code-editor.tsx";
import "./kv-upload.tsx";
import "./filter-editor.tsx";
