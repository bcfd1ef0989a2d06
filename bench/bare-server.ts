/**
 * The physical reference: node:http writing the service's own response bytes, nothing else. By
 * default with two headers of its own; with MODE=headers, with the headers the service sent with
 * those bytes (HEADERS_FILE: its names and values, in order), and a fresh request ID each time.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.BODY_FILE ?? '');
const mode = process.env.MODE;
const parsed: unknown = JSON.parse(body.toString('utf8'));
/** The service's headers as a flat list of names and values, request ID first; node adds Date and Connection. */
const serviceHeaders = mode === 'headers' ? (JSON.parse(readFileSync(process.env.HEADERS_FILE ?? '', 'utf8')) as string[]) : [];

createServer((_req, res) => {
  if (mode === 'headers') {
    const headers = serviceHeaders.slice();
    headers[1] = randomUUID();
    res.writeHead(200, headers).end(body);
    return;
  }
  const bytes = mode === 'stringify' ? JSON.stringify(parsed) : body;
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(bytes) });
  res.end(bytes);
}).listen(Number(process.env.PORT), '127.0.0.1');
