import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Answers `Expect: 100-continue` only for requests that will be accepted (RFC 9110 §10.1.1).
 *
 * ffmpeg writing HLS with `-method PUT` to a URL with credentials first sends the headers with
 * `Expect: 100-continue` and no `Authorization`, waiting for a 401 that names the auth scheme;
 * only then does it retry with basic auth. Node's default is to answer `100 Continue` to every such
 * request before any handler runs, so ffmpeg would stream its body and never see the 401. Here a
 * request that `refuses` is handed to the normal handlers without `100 Continue`, which answer it
 * (401) before the client sends any body; every other request gets `100 Continue` as before.
 */
export function installExpectContinue(server: Server, refuses: (request: IncomingMessage) => boolean): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!refuses(request)) response.writeContinue();
    server.emit('request', request, response);
  });
}
