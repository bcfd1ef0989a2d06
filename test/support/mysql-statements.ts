import type { TcpProxy } from './tcp-proxy.js';

/** COM_QUERY: the command byte of a statement sent as text, in MySQL's client protocol. */
const QUERY = 0x03;
/** COM_STMT_EXECUTE: the command byte of a prepared statement's run, in MySQL's client protocol. */
const STMT_EXECUTE = 0x17;
/** A packet's length (3 bytes) and sequence number (1), before its payload. */
const PACKET_HEADER = 4;

/** Each packet the clients sent through the proxy so far, connection by connection: its first byte (the command) and its payload. */
function* packets(proxy: TcpProxy): Generator<{ command: number | undefined; payload: Buffer }> {
  for (const chunks of proxy.sent()) {
    const bytes = Buffer.concat(chunks);
    for (let at = 0; at + PACKET_HEADER < bytes.length; at += PACKET_HEADER + bytes.readUIntLE(at, 3)) {
      yield { command: bytes[at + PACKET_HEADER], payload: bytes.subarray(at + PACKET_HEADER, at + PACKET_HEADER + bytes.readUIntLE(at, 3)) };
    }
  }
}

/** Prepared statements run through the proxy so far: each connection's bytes read packet by packet. */
export function statementsRun(proxy: TcpProxy): number {
  let runs = 0;
  for (const { command } of packets(proxy)) if (command === STMT_EXECUTE) runs += 1;
  return runs;
}

/** The text of every statement sent as text through the proxy so far (prepared ones are `statementsRun`). */
export function statementTexts(proxy: TcpProxy): string[] {
  const texts: string[] = [];
  for (const { command, payload } of packets(proxy)) if (command === QUERY) texts.push(payload.toString('utf8', 1));
  return texts;
}
