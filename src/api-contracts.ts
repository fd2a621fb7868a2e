import { AUTH_DOCS } from './auth/index.js';
import { CLUSTER_API_DOCS, CLUSTER_DOCS } from './cluster/index.js';
import { CONFIG_DOCS } from './config-api/index.js';
import { DASHBOARD_DOCS } from './dashboard/index.js';
import { EVENTS_DOCS } from './events/index.js';
import { HTTP_DOCS, type ApiContracts } from './http/index.js';
import { INGEST_DOCS } from './ingest/index.js';
import { LOG_DOCS } from './log/index.js';
import { METADATA_DOCS } from './metadata/index.js';
import { METRICS_DOCS } from './monitor/index.js';
import { PROBE_DOCS } from './probe/index.js';
import { PROCESS_DOCS, PROCESS_SCHEMAS } from './process/index.js';
import { SESSION_DOCS, SESSION_SCHEMAS } from './session/index.js';
import { SKILLS_DOCS } from './skills/index.js';
import { STORAGE_DOCS } from './storage/index.js';
import { TLS_DOCS } from './tls/index.js';
import { WIDGET_DOCS } from './widget/index.js';

/**
 * The API as the OpenAPI document shows it, collected from the domains' contracts: each domain
 * declares its shapes and describes its routes in its own `contract.ts` (docs/architecture.md,
 * "Contracts"); the HTTP server attaches each description to its route as the route is registered.
 */
export const API_CONTRACTS: ApiContracts = {
  docs: {
    ...HTTP_DOCS,
    ...AUTH_DOCS,
    ...METRICS_DOCS,
    ...PROCESS_DOCS,
    ...STORAGE_DOCS,
    ...SESSION_DOCS,
    ...DASHBOARD_DOCS,
    ...INGEST_DOCS,
    ...METADATA_DOCS,
    ...LOG_DOCS,
    ...SKILLS_DOCS,
    ...PROBE_DOCS,
    ...WIDGET_DOCS,
    ...CONFIG_DOCS,
    ...TLS_DOCS,
    ...EVENTS_DOCS,
    ...CLUSTER_DOCS,
    ...CLUSTER_API_DOCS,
  },
  sharedSchemas: [...PROCESS_SCHEMAS, ...SESSION_SCHEMAS],
};
