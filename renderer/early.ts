// Answers asked for before the console's code has loaded (src/boot.ts, the console's entry, sends
// them), handed to the transport when its first call asks the same document: the shell's first
// questions do not wait for React, antd and the renderer to download and run.
const sent = new Map<string, Promise<Response>>();
const asked = new Set<string>();

/** POSTs a document without variables, unless the transport already asked it. */
export function sendEarly(url: string, document: string): Promise<Response> | undefined {
  if (asked.has(document) || sent.has(document)) return sent.get(document);
  const response = fetch(url, {
    method: "POST",
    credentials: "include",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: document }),
  });
  // A failure is the transport's to report when it takes the answer.
  response.catch(() => undefined);
  sent.set(document, response);
  return response;
}

/** Forgets an early answer nobody will take (the registry, when nobody is signed in). */
export function dropEarly(document: string): void {
  sent.delete(document);
}

/** The early answer to a document, once: the next call of the same document asks the service again. */
export function takeEarly(document: string): Promise<Response> | undefined {
  asked.add(document);
  const response = sent.get(document);
  sent.delete(document);
  return response;
}
