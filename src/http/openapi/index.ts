import type { RouteDoc } from './route-doc.js';
import { DOCUMENT_DOCS } from './document-docs.js';
import { SYSTEM_DOCS } from './system-docs.js';

export {
  installApiDescription,
  isSwaggerUiFile,
  routeKey,
  DOCUMENT_PATHS,
  SWAGGER_UI_PREFIX,
  type ApiDescription,
  type ApiContracts,
} from './install.js';
export { registerDocumentRoutes } from './document-routes.js';
export {
  BEARER,
  empty,
  ErrorEnvelope,
  errors,
  GUARDED,
  JSON_BODY,
  opaque,
  PUBLIC,
  SAVED,
  type RouteDoc,
} from './route-doc.js';

/** The descriptions of the server's own routes: `/ping` and the document. */
export const HTTP_DOCS: Readonly<Record<string, RouteDoc>> = { ...SYSTEM_DOCS, ...DOCUMENT_DOCS };
