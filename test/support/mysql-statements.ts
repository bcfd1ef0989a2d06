import type { TcpProxy } from './tcp-proxy.js';

/** COM_STMT_EXECUTE: the command byte of a prepared statement's run, in MySQL's client protocol. */
const STMT_EXECUTE = 0x17;

/** Prepared statements run through the proxy so far: each connection's bytes read packet by packet. */
export function statementsRun(proxy: TcpProxy): number {
  let runs = 0;
  for (const chunks of proxy.sent()) {
    const bytes = Buffer.concat(chunks);
    for (let at = 0; at + 4 < bytes.length; at += 4 + bytes.readUIntLE(at, 3)) if (bytes[at + 4] === STMT_EXECUTE) runs += 1;
  }
  return runs;
}
