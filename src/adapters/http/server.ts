import type { Logger } from 'pino';
import type { ConnectionLimits } from '../listening/connection-guard.js';
import { jsonAnswers, startGuardedServer, type ListenerPolicy, type RunningServer } from '../listening/guarded-server.js';
import type { HttpHandler } from './handler.js';
import { ALLOWED_METHODS } from './operation.js';

export interface HttpServerOptions {
  readonly port: number;
  readonly host: string;
  readonly limits: ConnectionLimits;
  /** Where refused connections are summed up. */
  readonly logger?: Logger;
  readonly timeouts?: ListenerPolicy['timeouts'];
}

/** The API's listener: every guard of the listener policy, its own answers in the API's JSON error shape. */
export function startHttpServer(handle: HttpHandler, options: HttpServerOptions): Promise<RunningServer> {
  return startGuardedServer(handle, {
    port: options.port,
    host: options.host,
    policy: {
      limits: options.limits,
      format: jsonAnswers,
      allow: ALLOWED_METHODS,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
    },
  });
}
