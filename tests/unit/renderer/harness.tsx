// Renders screens against recorded service responses (fixtures/), as the console would.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { ReactNode } from "react";
import { createMemoryRouter, MemoryRouter, RouterProvider } from "react-router";
import { SWRConfig } from "swr";
import { DataProvider, GqlError, RegistryRoutes, type Transport } from "../../../renderer/index.ts";
import type { JsonSchema, Manifest, Registry, Viewer } from "../../../renderer/types.ts";
import "../../../src/widgets/index.ts";
import { FeedbackProvider } from "../../../renderer/feedback.tsx";

// The console loads views, widgets and pages when first shown. Loading their modules here puts that cost
// where it was before they were split out (a file's imports), not into whichever test renders them first.
await Promise.all(
  [
    "../../../renderer/views/ListView.tsx",
    "../../../renderer/views/VirtualRows.tsx",
    "../../../renderer/views/DetailView.tsx",
    "../../../renderer/views/FormView.tsx",
    "../../../renderer/views/ChartView.tsx",
    "../../../renderer/views/CustomView.tsx",
    "../../../renderer/views/AlertView.tsx",
    "../../../renderer/views/RunnerView.tsx",
    "../../../renderer/ActionDialogs.tsx",
    "../../../renderer/FeedbackHost.tsx",
    "../../../renderer/LeaveDialog.tsx",
    "../../../renderer/views/CustomRangePicker.tsx",
    "../../../renderer/form/RemoteOptions.tsx",
    "../../../renderer/form/TagsInput.tsx",
    "../../../renderer/widgets/curl.tsx",
    "../../../src/widgets/code-editor.tsx",
    "../../../src/widgets/code-sample.tsx",
    "../../../src/widgets/stream-filter-tester.tsx",
    "../../../src/widgets/stream-raw-payload.tsx",
    "../../../src/widgets/stream-start-block.tsx",
    "../../../src/widgets/kv-upload.tsx",
    "../../../src/widgets/filter-editor.tsx",
  ].map((module) => import(module)),
);

const root = path.resolve(import.meta.dirname, "../../..");
const fixtures = path.join(import.meta.dirname, "fixtures");

function walk(dir: string, suffix: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full, suffix) : name.endsWith(suffix) ? [full] : [];
  });
}

/** Every manifest in screens/, with its file. */
export const manifests: { file: string; manifest: Manifest }[] = walk(path.join(root, "screens"), ".screen.json").map(
  (file) => ({ file: path.relative(root, file), manifest: JSON.parse(readFileSync(file, "utf8")) as Manifest }),
);

/** Every entity schema in schemas/entities/, by its file name without `.schema.json`. */
function entitySchemas(): Record<string, JsonSchema> {
  const dir = path.join(root, "schemas", "entities");
  return Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name.endsWith(".schema.json"))
      .map((name) => [name.replace(/\.schema\.json$/, ""), JSON.parse(readFileSync(path.join(dir, name), "utf8"))]),
  );
}

/** Operation documents by name, from screens/ (each document as written, with its fragments). */
function operations(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const file of walk(path.join(root, "screens"), ".graphql")) {
    const text = readFileSync(file, "utf8");
    // The whole file (so fragments resolve), marked with the operation it stands for.
    for (const match of text.matchAll(/\b(query|mutation)\s+([A-Za-z0-9_]+)/g))
      out[match[2]] = `# operation ${match[2]}\n${text}`;
  }
  return out;
}

type Recorded = { data?: Record<string, unknown>; errors?: { message: string; extensions?: { code?: string } }[] };
const recorded = JSON.parse(readFileSync(path.join(fixtures, "responses.json"), "utf8")) as {
  endpointId: string;
  /** Route parameters by name, found by record.ts from the links of recorded rows. */
  params?: Record<string, string>;
  responses: Record<string, Recorded>;
};
export const recordedResponses = recorded.responses;
export const recordedId = recorded.endpointId;

export function registryFor(role: "owner" | "viewer"): Registry {
  const served = JSON.parse(readFileSync(path.join(fixtures, `registry.${role}.json`), "utf8")).data
    .registry as Registry;
  // Today's manifests and entity schemas from disk (the service serves them as they are), the manifests
  // limited to the screens the service served this role.
  const ids = new Set(served.screens.map((manifest) => manifest.id));
  const screens = manifests
    .map((entry) => entry.manifest)
    .filter((manifest) => role === "owner" || ids.has(manifest.id));
  return { ...served, screens, schemas: entitySchemas(), operations: operations() };
}

export function viewerFor(role: "OWNER" | "ADMIN" | "VIEWER"): Viewer {
  return { email: `${role.toLowerCase()}@example.test`, userRole: role };
}

/** A transport answering queries from the recorded responses by operation name; records calls. */
export function fixtureTransport(calls: { name: string; variables?: Record<string, unknown> }[] = []): Transport {
  return async (document, variables) => {
    const name =
      (/^# operation (\w+)/.exec(document) ?? /\b(?:query|mutation)\s+([A-Za-z0-9_]+)/.exec(document))?.[1] ?? "";
    calls.push({ name, variables });
    const response = recorded.responses[name];
    if (!response) throw new GqlError(`No recorded response for ${name}`, "INTERNAL");
    if (response.errors?.length) throw new GqlError(response.errors[0].message, response.errors[0].extensions?.code);
    return response.data ?? {};
  };
}

/**
 * A screen at `route` in a data router, as the console runs it (a form's leave guard needs one).
 * `history` are addresses visited before it and `future` after it (as if the user had come back), so a
 * test can go back and forward to them; `onRouter` gets the router.
 */
export function renderRoute(
  route: string,
  options: {
    registry: Registry;
    viewer: Viewer;
    transport?: Transport;
    history?: string[];
    future?: string[];
    onRouter?: (router: ReturnType<typeof createMemoryRouter>) => void;
  },
): ReactNode {
  const entries = [...(options.history ?? []), route, ...(options.future ?? [])];
  const router = createMemoryRouter(
    [
      {
        path: "*",
        element: (
          <DataProvider
            transport={options.transport ?? fixtureTransport()}
            registry={options.registry}
            viewer={options.viewer}
          >
            <RegistryRoutes extra={[{ path: "*", element: <p>not found</p> }]} />
          </DataProvider>
        ),
      },
    ],
    { initialEntries: entries, initialIndex: options.history?.length ?? 0 },
  );
  options.onRouter?.(router);
  return (
    <FeedbackProvider>
      <SWRConfig value={{ provider: () => new Map(), dedupingInterval: 0 }}>
        <RouterProvider router={router} />
      </SWRConfig>
    </FeedbackProvider>
  );
}

/** A route for a manifest with its parameters filled from the recording (else the recorded endpoint id). */
export function routeFor(manifest: Manifest): string {
  return manifest.route.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => recorded.params?.[name] ?? recordedId);
}

/** antd reads matchMedia, which jsdom does not have. */
export function installDomStandIns() {
  if (typeof window === "undefined") return;
  window.matchMedia ??= ((query: string) => ({
    matches: false,
    media: query,
    onchange: null,
    addListener: () => {},
    removeListener: () => {},
    addEventListener: () => {},
    removeEventListener: () => {},
    dispatchEvent: () => false,
  })) as typeof window.matchMedia;
  // jsdom does not implement pseudo-element styles; antd asks for them to measure scrollbars.
  const computed = window.getComputedStyle.bind(window);
  window.getComputedStyle = (element: Element) => computed(element);
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
}

/** A renderer subtree with what it reads from: a fresh SWR cache, a memory router, the registry and a viewer of `role`. */
export function withDataProviders(
  children: ReactNode,
  transport: Transport,
  registry: Registry,
  role: "OWNER" | "ADMIN" | "VIEWER" = "OWNER",
) {
  return (
    <FeedbackProvider>
      <SWRConfig value={{ provider: () => new Map(), dedupingInterval: 0 }}>
        <MemoryRouter>
          <DataProvider transport={transport} registry={registry} viewer={viewerFor(role)}>
            {children}
          </DataProvider>
        </MemoryRouter>
      </SWRConfig>
    </FeedbackProvider>
  );
}
