import type { Express } from 'express';

/**
 * A handler that serves everything under a path without being mounted there (`app.use(handler)`,
 * the path checked inside it) names that path here, so `servedPaths` finds it.
 */
export const MOUNT_PATH = Symbol.for('pmatch.mountPath');

/** The parts of an Express 5 router layer read here. */
interface Layer {
  rawPath?: unknown;
  route?: { path?: unknown };
  handle?: { stack?: Layer[]; [MOUNT_PATH]?: unknown };
}

/**
 * The first path segment (`/v1`, `/pay`, …) of everything `app` answers: its routes' paths, the
 * paths it mounts handlers at and the paths handlers name with MOUNT_PATH, through nested Routers.
 * Middleware for every path (no path of its own) adds none. Sorted, each once.
 */
export function servedPaths(app: Express): string[] {
  const found = new Set<string>();
  const add = (path: unknown) => {
    if (typeof path !== 'string') return;
    const first = /^\/[^/]+/.exec(path)?.[0];
    if (first !== undefined) found.add(first.toLowerCase());
  };
  const walk = (stack: Layer[] | undefined) => {
    for (const layer of stack ?? []) {
      if (layer.route !== undefined) add(layer.route.path);
      else if (typeof layer.handle?.[MOUNT_PATH] === 'string') add(layer.handle[MOUNT_PATH]);
      else if (typeof layer.rawPath === 'string' && layer.rawPath !== '/') add(layer.rawPath);
      else walk(layer.handle?.stack);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...found].sort();
}
