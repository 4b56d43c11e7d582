// A mistake in a manifest met while rendering (a widget the renderer does not know): `npm run
// validate` and the service's registry check catch these before a screen is served, so one reaching the
// renderer is a bug. In development and tests (Vite's and Vitest's DEV) it throws with the name, so the
// error overlay or the failing test says what is wrong; in production the screen keeps working, with a
// visible placeholder where the value would be and the mistake in the console.

/** Whether a manifest mistake throws: read at each call, so a test can stub the mode. */
export function failsLoudly(): boolean {
  return import.meta.env?.DEV === true;
}

export class ManifestFault extends Error {
  override name = "ManifestFault";
}

/** Throws in development and tests; in production logs and returns the placeholder to show. */
export function manifestFault(message: string) {
  if (failsLoudly()) throw new ManifestFault(message);
  console.error(`Nodeplane screen: ${message}`);
  return (
    <span className="np-manifest-fault" data-manifest-fault="">
      {message}
    </span>
  );
}
