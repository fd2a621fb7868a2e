import type { FastifyReply } from 'fastify';

/**
 * The sandbox every served file runs in when a browser opens it (issue 24 item 5). Without
 * `allow-same-origin` the page gets an opaque origin: it cannot read the storage of the server's
 * own pages (the dashboard) nor send requests with their standing, so a page a publisher uploaded
 * cannot act as the dashboard. Its scripts still run, forms, pop-ups (which leave the sandbox, for
 * share links to other sites), dialogs, downloads and full screen still work, and its requests for
 * playlists, segments and JSON reach the server as cross-origin requests, which CORS answers
 * (`storage.cors.origins`): the Restreamer UI's player site plays as before.
 */
const SANDBOX =
  'sandbox allow-scripts allow-forms allow-modals allow-popups allow-popups-to-escape-sandbox ' +
  'allow-downloads allow-presentation allow-orientation-lock allow-pointer-lock';

/**
 * Marks an answer as a user file: the sandbox above, and `nosniff` so a browser treats the file as
 * its extension's type only (an upload named `.txt` or `.jpg` is never run as a page or a script).
 */
export function markUserFile(reply: FastifyReply): void {
  void reply.header('content-security-policy', SANDBOX).header('x-content-type-options', 'nosniff');
}
