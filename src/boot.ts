// The console's entry: a small script that asks who is signed in, and for their registry of screens,
// before the console's code (React, antd, the renderer) has downloaded, then loads that code (and,
// for someone signed in, the signed-in console's code at once, not after the shell has run). The
// transport takes these answers (renderer/early.ts) instead of asking again. Both are asked at once:
// when nobody is signed in, the registry's refusal is dropped unread.
import { REGISTRY_DOCUMENT } from "../renderer/documents.ts";
import { dropEarly, sendEarly } from "../renderer/early.ts";
import { VIEWER_DOCUMENT } from "./documents.ts";

const GRAPHQL_URL = "/graphql";

sendEarly(GRAPHQL_URL, VIEWER_DOCUMENT)
  ?.then((response) => response.clone().json())
  .then((body: { data?: { viewer?: unknown } } | null) => {
    if (!body?.data?.viewer) dropEarly(REGISTRY_DOCUMENT);
    // Someone is signed in: the signed-in console's code starts downloading beside the shell's.
    else void import("./SignedIn.tsx");
  })
  .catch(() => dropEarly(REGISTRY_DOCUMENT));
sendEarly(GRAPHQL_URL, REGISTRY_DOCUMENT);

void import("./main.tsx");
