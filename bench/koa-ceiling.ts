/** The framework's own ceiling: Koa and the router writing the same cached bytes with the API's security headers. */
import { readFileSync } from 'node:fs';
import { Router } from '@koa/router';
import Koa from 'koa';
import { apiSecurityHeaders } from '../src/adapters/http/security-headers.js';

const body = readFileSync(process.env.BODY_FILE ?? '');
const security = apiSecurityHeaders('http://127.0.0.1');
const app = new Koa();
const router = new Router({ sensitive: true, strict: true });
router.get('/api/v1/public/sku/:sku', (ctx) => {
  for (let i = 0; i < security.length; i += 2) ctx.set(security[i]!, security[i + 1]!);
  ctx.body = body;
  ctx.type = 'application/json';
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1');
