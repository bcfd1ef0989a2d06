import { PORTAL_CSS, PORTAL_JS } from './portal-assets.js';
import { ASSET_PATHS } from './portal-pages.js';
import type { PortalRouter } from './portal-state.js';
import { named } from './request-log.js';

/** The portal's one style sheet and one script, served by itself so that the CSP allows only 'self'. */
export function addAssetRoutes(router: PortalRouter): void {
  router.get(ASSET_PATHS.css, named(ASSET_PATHS.css), (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = PORTAL_CSS;
  });
  router.get(ASSET_PATHS.js, named(ASSET_PATHS.js), (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = PORTAL_JS;
  });
}
