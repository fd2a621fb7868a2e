export { registerWidgetRoutes, type WidgetProcessSource } from './routes.js';
export { WIDGET_DOCS } from './contract.js';
