import { buildApp } from "./app.ts";
import { loadConfig } from "./platform/config.ts";
import { RegistryError } from "./registry/registry.ts";

const config = loadConfig(process.env, process.argv.slice(2));

let app: Awaited<ReturnType<typeof buildApp>>;
try {
  app = await buildApp(config);
} catch (error) {
  if (error instanceof RegistryError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const address = await app.app.listen({ port: config.port, host: config.host });
const url = config.publicUrl ?? address.replace("127.0.0.1", "localhost");
const { demoEmail, demoPassword, passwordCreated } = app.firstStart;
console.log(`
Nodeplane is running at ${url}
Sign in as ${demoEmail} (owner) or viewer@nodeplane.local (viewer)
Password: ${demoPassword}${passwordCreated ? "   (generated now; kept in the data directory)" : ""}
`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "stopping");
    app
      .close()
      .then(() => process.exit(0))
      .catch((error) => {
        app.log.error({ err: error }, "stopping failed");
        process.exit(1);
      });
  });
}
