import { watch } from "node:fs";
import path from "node:path";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "pino";
import { loadRegistry, type Registry, RegistryError } from "./registry.ts";
import { checkedRegistry } from "./snapshot.ts";

/**
 * The registry in use, checked at start (or read from the snapshot of the same inputs); in development it
 * reloads, checked again, when a manifest, document or entity schema changes.
 */
export class RegistryHolder {
  private registry: Registry;

  constructor(
    private readonly rootDir: string,
    private readonly apiSchema: GraphQLSchema,
  ) {
    this.registry = checkedRegistry(rootDir, apiSchema);
  }

  current(): Registry {
    return this.registry;
  }

  watch(log: Logger): () => void {
    let timer: NodeJS.Timeout | undefined;
    const reload = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        try {
          this.registry = loadRegistry(this.rootDir, this.apiSchema);
          log.info({ screens: this.registry.screens.length }, "screen registry reloaded");
        } catch (error) {
          if (error instanceof RegistryError) log.error(error.message);
          else log.error({ err: error }, "screen registry reload failed");
        }
      }, 100);
    };
    const watchers = ["screens", "schemas/entities"].map((dir) =>
      watch(path.join(this.rootDir, dir), { recursive: true }, reload),
    );
    return () => {
      for (const watcher of watchers) watcher.close();
    };
  }
}
