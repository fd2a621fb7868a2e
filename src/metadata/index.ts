export { SystemMetadata, type MetadataStore } from './system-metadata.js';
export { registerMetadataRoutes } from './routes.js';
export { METADATA_LIMITS, checkSet as checkMetadataChange } from './limits.js';
export { METADATA_DOCS } from './contract.js';
