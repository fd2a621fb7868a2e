export { SystemMetadata, type MetadataStore } from './system-metadata.js';
export { registerMetadataRoutes } from './routes.js';
export { METADATA_LIMITS, checkSet as checkMetadataChange, jsonBytes as metadataBytes } from './limits.js';
export { MetadataBudget, processOwner, SYSTEM_OWNER } from './budget.js';
export { METADATA_DOCS } from './contract.js';
