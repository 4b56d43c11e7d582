// Every custom widget the manifests may name; importing this registers them.
import "./code-sample.tsx";
