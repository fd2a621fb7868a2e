import type { FastifyReply } from 'fastify';

/**
 * The headers of the UI build at `/ui/` (`router.ui_path`). Unlike user files it is not sandboxed:
 * it is a build the operator installed, and it must keep its login in the origin's storage. Its
 * policy keeps what the Restreamer UI does and no more: code only from its own files (its `eval`:
 * the player site's Handlebars templates are compiled in the page); styles inline (emotion, MUI);
 * API calls to any address (`?address=` points it at another server, and it asks the datarhei
 * service for updates); pictures and media from anywhere (publication logos, previews, the
 * player); never framed by another site, no plugins, no `<base>` of another origin.
 */
const UI_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' https://www.gstatic.com; " +
    "style-src 'self' 'unsafe-inline'; img-src * data: blob:; media-src * data: blob:; font-src 'self' data:; " +
    "connect-src *; frame-src *; worker-src 'self' blob:; object-src 'none'; base-uri 'self'; frame-ancestors 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  // Revalidated on every load (a 304 with Last-Modified), so an updated build shows at once.
  'cache-control': 'no-cache',
} as const;

export function markUiFile(reply: FastifyReply): void {
  void reply.headers(UI_HEADERS);
}
