/** The physical reference: node:http writing the service's own response bytes, nothing else. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.BODY_FILE ?? '');
const stringifyEachTime = process.env.MODE === 'stringify';
const parsed: unknown = JSON.parse(body.toString('utf8'));

createServer((_req, res) => {
  const bytes = stringifyEachTime ? JSON.stringify(parsed) : body;
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(bytes) });
  res.end(bytes);
}).listen(Number(process.env.PORT), '127.0.0.1');
