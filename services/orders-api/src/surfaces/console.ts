import type { ServiceRuntime } from '@pmatch/platform';
import type { OrdersApiConfig } from '../config';
import { consoleApp } from '../console/app';
import { consoleThrottles } from '../data/login-throttle';
import { underPath } from '../http/under-path';
import type { OrdersApiDeps } from '../use-cases/deps';

/** The seller console under /dashboard, every request counted against its address's limit. */
export function mountConsole(runtime: ServiceRuntime, deps: OrdersApiDeps, config: OrdersApiConfig): void {
  const limiter = runtime.rateLimiter(config.CONSOLE_LIMIT_PER_SECOND, config.CONSOLE_LIMIT_BURST);
  runtime.http.use(
    '/dashboard',
    runtime.addressLimit({
      name: 'console',
      limiter,
      counts: 'every request',
      message: 'Too many requests from this address; retry after the time in Retry-After.',
    }),
  );
  runtime.http.use(
    underPath(
      '/dashboard',
      consoleApp(deps, {
        throttles: consoleThrottles(runtime.redis('best-effort'), config.REDIS_PREFIX),
        cookies: { secure: config.NODE_ENV === 'production' || config.PUBLIC_BASE_URL.startsWith('https:') },
        publicOrigin: new URL(config.PUBLIC_BASE_URL).origin,
        logger: runtime.logger,
      }),
    ),
  );
}
