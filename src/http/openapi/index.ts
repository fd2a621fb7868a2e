import type { TSchema } from 'typebox';
import type { RouteDoc } from './routes/route-doc.js';
import { AUTH_DOCS } from './routes/auth.js';
import { DASHBOARD_DOCS } from './routes/dashboard.js';
import { DOCUMENT_DOCS } from './routes/document.js';
import { INGEST_DOCS } from './routes/ingest.js';
import { METRICS_DOCS } from './routes/metrics.js';
import { PROCESS_DOCS, PROCESS_SCHEMAS } from './routes/process.js';
import { SESSION_DOCS, SESSION_SCHEMAS } from './routes/session.js';
import { STORAGE_DOCS } from './routes/storage.js';
import { SYSTEM_DOCS } from './routes/system.js';

export {
  installApiDescription,
  isSwaggerUiFile,
  routeKey,
  DOCUMENT_PATHS,
  SWAGGER_UI_PREFIX,
  type ApiDescription,
} from './install.js';
export { registerDocumentRoutes } from './document-routes.js';
export { ErrorEnvelope, type RouteDoc } from './routes/route-doc.js';

/** The description of every route of the API, by `METHOD url` (see install.ts). */
export const ROUTE_DOCS: Readonly<Record<string, RouteDoc>> = {
  ...SYSTEM_DOCS,
  ...DOCUMENT_DOCS,
  ...AUTH_DOCS,
  ...METRICS_DOCS,
  ...PROCESS_DOCS,
  ...STORAGE_DOCS,
  ...SESSION_DOCS,
  ...DASHBOARD_DOCS,
  ...INGEST_DOCS,
};

/** Schemas the descriptions refer to by `$ref`. */
export const SHARED_SCHEMAS: readonly TSchema[] = [...PROCESS_SCHEMAS, ...SESSION_SCHEMAS];
