import type { Context } from 'koa';

const HTML_TYPE = 'text/html; charset=utf-8';

export function sendPage(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = HTML_TYPE;
  ctx.body = body;
}

/** 303, not Koa's 302: the browser fetches the next page with a GET, whatever the request was (a form's POST). */
export function seeOther(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}
