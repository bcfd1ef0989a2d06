/** The framework's own ceiling: Koa, the router and helmet writing the same cached bytes. */
import { readFileSync } from 'node:fs';
import { Router } from '@koa/router';
import Koa from 'koa';
import helmet from 'koa-helmet';

const body = readFileSync(process.env.BODY_FILE ?? '');
const app = new Koa();
const router = new Router({ sensitive: true, strict: true });
router.get('/api/v1/public/sku/:sku', (ctx) => {
  ctx.body = body;
  ctx.type = 'application/json';
});
app.use(helmet());
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1');
